//! The live loop: one thread owns the env and the policy and steps them at the policy rate
//! (scaled by `--speed`), taking the driving page's inputs before each step and sending each
//! step to every page through the [`Hub`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::sync::{broadcast, watch};

use super::messages::{Input, Refused, Scene, Step};
use super::{PlayEnd, PlayOptions};
use crate::algos::seeding::{derive, stream};
use crate::envs::{terrain::TerrainKind, PhysicsOverride, TerrainArg};
use crate::eval::Driven;
use crate::replay::{Frame, Ground};

/// Steps the live loop may fall behind its schedule before it stops catching up (a slow
/// machine then runs slower than real time instead of in bursts).
const MAX_CATCH_UP: u32 = 5;

/// Half the side of the square of ground the page is sent around the start (m).
const GROUND_HALF_SIDE: f32 = 8.0;

/// How many updates a page may fall behind before it skips to the newest.
const UPDATE_BACKLOG: usize = 256;

/// What the loop and the server share.
pub struct Hub {
    /// Every scene and step as JSON text, to every page.
    pub updates: broadcast::Sender<Arc<str>>,
    /// The latest scene, for pages that connect later.
    scene: Mutex<Option<Arc<str>>>,
    /// The driving page's inputs not taken yet.
    inputs: Mutex<Vec<Input>>,
    /// Set when the server or the loop ends.
    stopping: AtomicBool,
    /// The server's shutdown signal (true: stop).
    stopped: watch::Sender<bool>,
}

impl Hub {
    pub fn new() -> Self {
        Self {
            updates: broadcast::channel(UPDATE_BACKLOG).0,
            scene: Mutex::new(None),
            inputs: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            stopped: watch::channel(false).0,
        }
    }

    /// Ends the loop and the server.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stopped.send_replace(true);
    }

    /// Whether [`Hub::stop`] was called.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// A receiver of the shutdown signal.
    pub fn shutdown(&self) -> watch::Receiver<bool> {
        self.stopped.subscribe()
    }

    /// The latest scene message, if the loop has started.
    pub fn scene(&self) -> Option<Arc<str>> {
        self.scene.lock().ok().and_then(|s| s.clone())
    }

    /// Queues a driving input for the next step.
    pub fn input(&self, input: Input) {
        if let Ok(mut inputs) = self.inputs.lock() {
            inputs.push(input);
        }
    }

    /// Sends `message` to every page (none listening is fine).
    fn send(&self, message: String) {
        let _ = self.updates.send(Arc::from(message));
    }
}

/// Starts the loop on its own thread; it ends when the hub stops or on Ctrl-C.
pub fn spawn(
    driven: Driven,
    options: PlayOptions,
    hub: Arc<Hub>,
) -> Result<JoinHandle<Result<PlayEnd>>> {
    std::thread::Builder::new()
        .name("gait-play".into())
        .spawn(move || {
            tch::set_num_threads(1);
            let _no_grad = tch::no_grad_guard();
            let result = Live::new(driven, options, hub.clone()).and_then(|mut live| live.run());
            hub.stop();
            result
        })
        .context("starting the simulation thread")
}

/// The loop's state.
struct Live {
    driven: Driven,
    options: PlayOptions,
    hub: Arc<Hub>,
    /// The ground now.
    terrain: Option<TerrainArg>,
    command: [f32; 3],
    range: [[f32; 2]; 3],
    obs: Vec<f32>,
    action: Vec<f32>,
    episode: u64,
    t: u64,
    ack: u64,
    /// The push taken for the next step, to report with it.
    push: Option<[f32; 2]>,
    /// Why the episode that ends next ends, when an input ends it.
    ending: Option<String>,
}

impl Live {
    fn new(mut driven: Driven, options: PlayOptions, hub: Arc<Hub>) -> Result<Self> {
        let range = driven.env.walking().and_then(|w| w.command_range());
        let range = range.unwrap_or([[-1.0, 1.0], [-0.3, 0.3], [-0.5, 0.5]]);
        hold_still(&mut driven)?;
        let action = vec![0.0; driven.env.action_size()];
        Ok(Self {
            terrain: options.physics.terrain,
            driven,
            options,
            hub,
            command: [0.0; 3],
            range,
            obs: Vec::new(),
            action,
            episode: 0,
            t: 0,
            ack: 0,
            push: None,
            ending: None,
        })
    }

    /// Steps in real time until the hub stops or a stop is requested.
    fn run(&mut self) -> Result<PlayEnd> {
        let dt = self.driven.env.policy_dt() as f64;
        let period = Duration::from_secs_f64(dt / self.options.speed);
        self.begin(None)?;
        let mut due = Instant::now();
        loop {
            if crate::algos::interrupt::requested() {
                return Ok(PlayEnd::Interrupted);
            }
            if self.hub.stopping() {
                return Ok(PlayEnd::PageClosed);
            }
            self.take_inputs()?;
            if let Some(why) = self.ending.take() {
                self.begin(Some((why, self.t)))?;
            }
            let behind = Instant::now().saturating_duration_since(due);
            self.step(behind)?;
            due += period;
            let now = Instant::now();
            if now > due + period * MAX_CATCH_UP {
                due = now;
            }
            if let Some(wait) = due.checked_duration_since(now) {
                std::thread::sleep(wait);
            }
        }
    }

    /// One policy step, sent to the pages; a fall or a blown-up simulation begins a new
    /// episode.
    fn step(&mut self, behind: Duration) -> Result<()> {
        self.driven.act(&self.obs, &mut self.action)?;
        let env = self.driven.env.as_mut();
        let step = env.step(&self.action);
        let (reward, done) = (step.reward, step.done);
        self.obs.copy_from_slice(step.obs);
        let info: Vec<(&str, f32)> = step.info.to_vec();
        let frame = Frame::capture(env, reward, &info);
        let diverged = env.diverged();
        let phase = env.walking().and_then(|w| w.gait_phase());
        let message = Step {
            kind: "step",
            episode: self.episode,
            t: self.t,
            frame: &frame,
            command: self.command,
            phase,
            push: self.push.take(),
            ack: self.ack,
            behind_ms: behind.as_secs_f32() * 1000.0,
        };
        self.hub.send(serde_json::to_string(&message)?);
        self.t += 1;
        if done || diverged {
            let why = match env.termination() {
                Some(why) if done => format!("fell: {why}"),
                _ => "the simulation blew up (a non-finite state, reset)".to_string(),
            };
            self.begin(Some((why, self.t)))?;
        }
        Ok(())
    }

    /// Takes the driving page's inputs in order; a refusal goes back to the pages.
    fn take_inputs(&mut self) -> Result<()> {
        let inputs = match self.hub.inputs.lock() {
            Ok(mut inputs) => std::mem::take(&mut *inputs),
            Err(_) => return Ok(()),
        };
        for input in inputs {
            let seq = input.seq();
            match self.take(input) {
                Ok(()) => self.ack = seq,
                Err(why) => {
                    let refused = Refused { kind: "refused", seq, why };
                    self.hub.send(serde_json::to_string(&refused)?);
                }
            }
        }
        Ok(())
    }

    /// One input; `Err(why)` when it is refused.
    fn take(&mut self, input: Input) -> std::result::Result<(), String> {
        let walking = self.driven.env.walking_mut().ok_or("the env takes no commands")?;
        match input {
            Input::Command { command, .. } => {
                let mut clamped = [0.0f32; 3];
                for (k, (&v, [lo, hi])) in command.iter().zip(self.range).enumerate() {
                    if !v.is_finite() {
                        return Err(format!("command entry {k} is not a number"));
                    }
                    clamped[k] = v.clamp(lo, hi);
                }
                walking.steer(&clamped).map_err(|e| e.to_string())?;
                self.command = clamped;
            }
            Input::Push { dv, .. } => {
                walking.push_now(dv).map_err(|e| e.to_string())?;
                self.push = Some(dv);
            }
            Input::Reset { .. } => self.ending = Some("reset".to_string()),
            Input::Ground { terrain, .. } => {
                let arg: TerrainArg = terrain.parse()?;
                self.change_ground(arg).map_err(|e| format!("{e:#}"))?;
                self.ending = Some("ground changed".to_string());
            }
        }
        Ok(())
    }

    /// Rebuilds the env on `arg`'s ground (its backends build the ground with the model).
    fn change_ground(&mut self, arg: TerrainArg) -> Result<()> {
        let terrain = (arg.kind != TerrainKind::Flat).then_some(arg);
        let physics = PhysicsOverride { terrain, ..self.options.physics };
        let mut driven = Driven::new(&self.options.source, physics)?;
        hold_still(&mut driven)?;
        if let Some(w) = driven.env.walking_mut() {
            w.steer(&self.command).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        self.driven = driven;
        self.terrain = terrain;
        Ok(())
    }

    /// A new episode (its seed the next one derived from `--seed`), announced to the pages
    /// with how the last one ended.
    fn begin(&mut self, ended: Option<(String, u64)>) -> Result<()> {
        let seed = derive(self.options.seed, &[stream::EVAL_JOB, u64::MAX, self.episode]);
        let env = self.driven.env.as_mut();
        env.seed(seed);
        self.obs = env.reset().to_vec();
        self.driven.reset();
        self.action.fill(0.0);
        let dt = self.driven.env.policy_dt();
        let scene = Scene {
            kind: "scene",
            env: self.driven.env_name.clone(),
            policy: self.driven.checkpoint.display().to_string(),
            dt,
            speed: self.options.speed,
            bodies: self.driven.env.bodies().map(|b| b.body_shapes()).unwrap_or_default(),
            range: self.range,
            terrains: terrains(&self.driven),
            terrain: match self.terrain {
                Some(t) => format!("{}:{}", t.kind.name(), t.difficulty),
                None => "flat".to_string(),
            },
            episode: self.episode,
            ground: self.ground(),
            ended_after: ended.as_ref().map(|(_, t)| *t as f32 * dt),
            ended: ended.map(|(why, _)| why),
        };
        let text: Arc<str> = Arc::from(serde_json::to_string(&scene)?);
        if let Ok(mut latest) = self.hub.scene.lock() {
            *latest = Some(text.clone());
        }
        let _ = self.hub.updates.send(text);
        self.episode += 1;
        self.t = 0;
        Ok(())
    }

    /// The ground around the pelvis at the start, when it is not the flat floor.
    fn ground(&self) -> Option<Ground> {
        let bodies = self.driven.env.bodies()?;
        let field = bodies.ground()?;
        let mut poses = Vec::new();
        bodies.body_poses(&mut poses);
        let [x, y, _] = poses.first()?.position;
        let h = GROUND_HALF_SIDE;
        Ground::within(field, [x - h, y - h], [x + h, y + h])
    }
}

/// The env holds still until told otherwise: a zero command, no pushes of its own.
fn hold_still(driven: &mut Driven) -> Result<()> {
    let walking = driven.env.walking_mut().context("the env takes no commands")?;
    walking.steer(&[0.0; 3]).map_err(|e| anyhow::anyhow!("the env refused to stand: {e}"))?;
    walking
        .set_push(crate::envs::Pushes::UpTo(0.0))
        .map_err(|e| anyhow::anyhow!("the env refused to turn its pushes off: {e}"))?;
    Ok(())
}

/// The grounds the page may choose: every terrain kind for an env with physics backends
/// (they build the ground), none else.
fn terrains(driven: &Driven) -> Vec<&'static str> {
    use clap::ValueEnum;
    match driven.physics {
        Some(_) => TerrainKind::value_variants().iter().map(|k| k.name()).collect(),
        None => Vec::new(),
    }
}
