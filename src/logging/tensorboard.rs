//! TensorBoard event files written with `prost` derive messages and `crc32c` (no protoc, no
//! protobuf crate with advisories, no unmaintained `tensorboard-rs`).
//!
//! Wire format: each record is `u64le len, u32le masked_crc(len), data, u32le masked_crc(data)`
//! where `masked_crc(x) = rotr(crc32c(x), 15) + 0xa282ead8`; `data` is an `Event` protobuf. The
//! first event carries `file_version = "brain.Event:2"`. Files are named
//! `events.out.tfevents.{secs}.{host}.{pid}.{n}` and opened with `create_new`, so two writers
//! never clobber each other. Each event is one `write(2)`, visible to TensorBoard at once.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use prost::Message;

/// `tensorflow.Event` (the fields we use).
#[derive(Clone, PartialEq, Message)]
pub struct Event {
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    #[prost(int64, tag = "2")]
    pub step: i64,
    #[prost(oneof = "EventWhat", tags = "3, 5")]
    pub what: Option<EventWhat>,
}

/// What an event holds.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum EventWhat {
    /// The file's version record.
    #[prost(string, tag = "3")]
    FileVersion(String),
    /// Scalars.
    #[prost(message, tag = "5")]
    Summary(Summary),
}

#[derive(Clone, PartialEq, Message)]
pub struct Summary {
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<SummaryValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SummaryValue {
    #[prost(string, tag = "1")]
    pub tag: String,
    #[prost(message, optional, tag = "9")]
    pub metadata: Option<SummaryMetadata>,
    #[prost(oneof = "ValueKind", tags = "2, 8")]
    pub value: Option<ValueKind>,
}

/// How a scalar is stored.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ValueKind {
    /// A `simple_value`.
    #[prost(float, tag = "2")]
    SimpleValue(f32),
    /// A tensor.
    #[prost(message, tag = "8")]
    Tensor(TensorProto),
}

#[derive(Clone, PartialEq, Message)]
pub struct SummaryMetadata {
    #[prost(message, optional, tag = "1")]
    pub plugin_data: Option<PluginData>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PluginData {
    #[prost(string, tag = "1")]
    pub plugin_name: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShape>,
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub string_val: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorShape {
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<TensorDim>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorDim {
    #[prost(int64, tag = "1")]
    pub size: i64,
}

const DT_STRING: i32 = 7;

fn masked_crc(data: &[u8]) -> u32 {
    crc32c::crc32c(data).rotate_right(15).wrapping_add(0xa282_ead8)
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Appends events to one new event file.
#[derive(Debug)]
pub struct EventWriter {
    file: File,
    path: PathBuf,
}

impl EventWriter {
    /// Creates a new event file in `dir` (never reusing an existing name).
    pub fn create(dir: &Path) -> Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let secs = now() as u64;
        let (host, pid) = (hostname(), std::process::id());
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("events.out.tfevents.{secs:010}.{host}.{pid}.{n}"));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    let mut w = Self { file, path };
                    w.write_event(&Event {
                        wall_time: now(),
                        step: 0,
                        what: Some(EventWhat::FileVersion("brain.Event:2".into())),
                    })?;
                    return Ok(w);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("creating {}", path.display()));
                }
            }
        }
    }

    /// The event file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_event(&mut self, event: &Event) -> Result<()> {
        let data = event.encode_to_vec();
        let len = (data.len() as u64).to_le_bytes();
        let mut record = Vec::with_capacity(data.len() + 16);
        record.extend_from_slice(&len);
        record.extend_from_slice(&masked_crc(&len).to_le_bytes());
        record.extend_from_slice(&data);
        record.extend_from_slice(&masked_crc(&data).to_le_bytes());
        self.file.write_all(&record).with_context(|| format!("writing {}", self.path.display()))
    }

    /// Writes several scalars of one step as one event.
    pub fn scalars(&mut self, step: i64, values: &[(&str, f64)]) -> Result<()> {
        let value = values
            .iter()
            .map(|(tag, v)| SummaryValue {
                tag: tag.to_string(),
                metadata: None,
                value: Some(ValueKind::SimpleValue(*v as f32)),
            })
            .collect();
        self.write_event(&Event {
            wall_time: now(),
            step,
            what: Some(EventWhat::Summary(Summary { value })),
        })
    }

    /// Writes markdown text (shown in TensorBoard's Text tab).
    pub fn text(&mut self, step: i64, tag: &str, markdown: &str) -> Result<()> {
        let tensor = TensorProto {
            dtype: DT_STRING,
            tensor_shape: Some(TensorShape { dim: vec![TensorDim { size: 1 }] }),
            string_val: vec![markdown.as_bytes().to_vec()],
        };
        let value = SummaryValue {
            tag: tag.to_string(),
            metadata: Some(SummaryMetadata {
                plugin_data: Some(PluginData { plugin_name: "text".into() }),
            }),
            value: Some(ValueKind::Tensor(tensor)),
        };
        self.write_event(&Event {
            wall_time: now(),
            step,
            what: Some(EventWhat::Summary(Summary { value: vec![value] })),
        })
    }
}

/// Reads and verifies (lengths and both CRCs) every record of an event file.
pub fn read_events(path: &Path) -> Result<Vec<Event>> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .with_context(|| format!("reading {}", path.display()))?;
    let mut events = Vec::new();
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        if rest.len() < 12 {
            bail!("truncated record header at byte {}", bytes.len() - rest.len());
        }
        let (len_bytes, tail) = rest.split_at(8);
        let len = u64::from_le_bytes(len_bytes.try_into()?) as usize;
        let len_crc = u32::from_le_bytes(tail[..4].try_into()?);
        if len_crc != masked_crc(len_bytes) {
            bail!("bad length CRC at byte {}", bytes.len() - rest.len());
        }
        let tail = &tail[4..];
        if tail.len() < len + 4 {
            bail!("truncated record at byte {}", bytes.len() - rest.len());
        }
        let (data, tail) = tail.split_at(len);
        if u32::from_le_bytes(tail[..4].try_into()?) != masked_crc(data) {
            bail!("bad data CRC at byte {}", bytes.len() - rest.len());
        }
        events.push(Event::decode(data).context("decoding an Event")?);
        rest = &tail[4..];
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_crc_matches_tensorflow() {
        // crc32c("123456789") = 0xE3069283 (the standard check value).
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
        let expected = 0xE306_9283u32.rotate_right(15).wrapping_add(0xa282_ead8);
        assert_eq!(masked_crc(b"123456789"), expected);
    }

    #[test]
    fn round_trips_and_two_writers_do_not_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = EventWriter::create(dir.path()).unwrap();
        let mut b = EventWriter::create(dir.path()).unwrap();
        assert_ne!(a.path(), b.path());
        a.scalars(3, &[("Train/Return", 1.5), ("Optimizer/KL", 0.01)]).unwrap();
        a.text(0, "Config/args", "hello").unwrap();
        b.scalars(1, &[("x", 2.0)]).unwrap();
        let events = read_events(a.path()).unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].what, Some(EventWhat::FileVersion("brain.Event:2".into())));
        let Some(EventWhat::Summary(s)) = &events[1].what else { panic!("no summary") };
        assert_eq!(events[1].step, 3);
        assert_eq!(s.value[0].tag, "Train/Return");
        assert_eq!(s.value[0].value, Some(ValueKind::SimpleValue(1.5)));
        assert_eq!(read_events(b.path()).unwrap().len(), 2);
        // Corrupting a byte is detected.
        let mut bytes = std::fs::read(a.path()).unwrap();
        let last = bytes.len() - 6;
        bytes[last] ^= 0xff;
        std::fs::write(a.path(), bytes).unwrap();
        assert!(read_events(a.path()).is_err());
    }
}
