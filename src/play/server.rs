//! The HTTP side of `gait play` (axum): `/` is the page, `/ws` the WebSocket every page
//! opens. The first page to connect drives (its inputs reach the live loop), the others
//! watch; the driving page closing ends the server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use tokio::sync::broadcast::error::RecvError;

use super::live::Hub;
use super::messages::{Input, Refused, Role};

/// What every request handler shares.
#[derive(Clone)]
struct Shared {
    page: Arc<str>,
    hub: Arc<Hub>,
    /// Whether a page drives (taken by the first to connect, for the server's life).
    driven: Arc<AtomicBool>,
}

/// Serves `page` and the WebSocket on `listener` until the hub stops.
pub async fn serve(listener: tokio::net::TcpListener, page: String, hub: Arc<Hub>) -> Result<()> {
    let mut shutdown = hub.shutdown();
    let shared = Shared { page: Arc::from(page), hub, driven: Arc::new(AtomicBool::new(false)) };
    let app = Router::new().route("/", get(index)).route("/ws", get(socket)).with_state(shared);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = shutdown.wait_for(|&stop| stop).await;
        })
        .await
        .context("serving the page")
}

async fn index(State(shared): State<Shared>) -> impl IntoResponse {
    Html(shared.page.to_string())
}

async fn socket(ws: WebSocketUpgrade, State(shared): State<Shared>) -> impl IntoResponse {
    ws.on_upgrade(move |socket| connection(socket, shared))
}

/// One page's connection: its role, the latest scene, then every update; the driver's
/// inputs go to the hub.
async fn connection(mut socket: WebSocket, shared: Shared) {
    let drives = !shared.driven.swap(true, Ordering::SeqCst);
    let role = Role { kind: "role", role: if drives { "drive" } else { "watch" } };
    let mut updates = shared.hub.updates.subscribe();
    let mut hello = vec![serde_json::to_string(&role).unwrap_or_default()];
    hello.extend(shared.hub.scene().map(|s| s.to_string()));
    for text in hello {
        if socket.send(Message::Text(Utf8Bytes::from(text))).await.is_err() {
            return closed(drives, &shared);
        }
    }
    let mut shutdown = shared.hub.shutdown();
    // (The only change is to "stop", and a stop before this point ends the updates too.)
    loop {
        tokio::select! {
            update = updates.recv() => match update {
                Ok(text) => {
                    if socket.send(Message::Text(Utf8Bytes::from(&*text))).await.is_err() {
                        break;
                    }
                }
                // A page too slow for every step skips to the newest.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            },
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    if let Some(refusal) = read_input(&text, drives, &shared.hub) {
                        let text = serde_json::to_string(&refusal).unwrap_or_default();
                        if socket.send(Message::Text(Utf8Bytes::from(text))).await.is_err() {
                            break;
                        }
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            _ = shutdown.changed() => {
                let _ = socket.send(Message::Close(None)).await;
                break;
            }
        }
    }
    closed(drives, &shared);
}

/// A page has gone: the driver's going ends the server.
fn closed(drives: bool, shared: &Shared) {
    if drives {
        shared.hub.stop();
    }
}

/// Hands the driver's input to the hub; the refusal to send back, if any.
fn read_input(text: &str, drives: bool, hub: &Hub) -> Option<Refused> {
    let input: Input = match serde_json::from_str(text) {
        Ok(input) => input,
        Err(e) => {
            let why = format!("not an input the server knows: {e}");
            return Some(Refused { kind: "refused", seq: 0, why });
        }
    };
    if !drives {
        let why = "this page watches; the first page that connected drives".to_string();
        return Some(Refused { kind: "refused", seq: input.seq(), why });
    }
    hub.input(input);
    None
}
