//! Checks before anything is allocated: the sampler worker count against the cores, and the
//! networks' and one iteration's experience memory against what the machine has.

use tch::Device;

use crate::config::{DeviceKind, UsageError};
use crate::policies::NetSpec;

/// The most sampler workers per available core. Each worker is a thread with its own env
/// and network copy; far past the core count they only add switching (1000 workers on 2 cores
/// ran 7x slower than 2) and, in the millions, exhaust threads.
pub const MAX_WORKERS_PER_CORE: usize = 16;

/// Bytes per parameter the process holds: actor+critic as f32 parameters, gradients, the
/// optimizer's flat copy and two Adam moments (5 x 4), the f64 broadcast snapshot (8), plus
/// one f32 copy per sampler worker (added by [`check_resources`]).
const BYTES_PER_PARAM: u128 = 5 * 4 + 8;

/// Bytes per buffered step beyond its observation and action floats: reward, value, return,
/// advantage, log-probability and bookkeeping, and the whole row copied once more into the
/// optimizer's tensors (the factor 2 in [`check_resources`]).
const BUFFER_EXTRA_FLOATS: u128 = 8;

/// Checks the worker count, the networks' memory and the experience buffer's (`buffer_steps`
/// steps per iteration) before anything is allocated or created; returns a warning for
/// oversubscribed workers.
pub fn check_resources(
    spec: &NetSpec,
    workers: usize,
    cores: usize,
    buffer_steps: usize,
    available_bytes: Option<u128>,
) -> Result<Option<String>, UsageError> {
    let cap = MAX_WORKERS_PER_CORE * cores;
    if workers > cap {
        return Err(UsageError(format!(
            "--workers {workers} is more than {MAX_WORKERS_PER_CORE} per core ({cores} cores, \
             at most {cap}); past the core count extra workers only slow sampling down"
        )));
    }
    let params = spec.num_params();
    let needed = params * (BYTES_PER_PARAM + 4 * workers as u128);
    if let Some(available) = available_bytes {
        if needed > available {
            let layers: Vec<String> = spec.layers.iter().map(usize::to_string).collect();
            return Err(UsageError(format!(
                "--layers {}: the actor and critic have {params:.3e} parameters, about {:.1} GB \
                 with {workers} workers, more than the {:.1} GB of memory available",
                layers.join(","),
                needed as f64 / 1e9,
                available as f64 / 1e9,
            )));
        }
        let row = (spec.obs_dim + spec.act_dim) as u128 + BUFFER_EXTRA_FLOATS;
        let buffer = buffer_steps as u128 * row * 4 * 2;
        if needed + buffer > available {
            return Err(UsageError(format!(
                "--num-steps {buffer_steps}: one iteration's experience takes about {:.1} GB, \
                 more than the {:.1} GB of memory available besides the networks",
                buffer as f64 / 1e9,
                available.saturating_sub(needed) as f64 / 1e9,
            )));
        }
    }
    Ok((workers > cores).then(|| {
        format!(
            "warning: --workers {workers} on {cores} cores: sampling is fastest with one worker \
             per core; results do not depend on the worker count"
        )
    }))
}

/// `MemAvailable` from `/proc/meminfo` (Linux), in bytes.
pub fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resolves the optimizer device; `cuda` without a usable GPU is a usage error.
pub fn resolve_device(device: DeviceKind) -> Result<Device, UsageError> {
    match device {
        DeviceKind::Cpu => Ok(Device::Cpu),
        DeviceKind::Cuda if tch::Cuda::is_available() => Ok(Device::Cuda(0)),
        DeviceKind::Cuda => Err(UsageError(
            "--device cuda: no CUDA GPU is available to libtorch (no GPU, no driver, or the \
             CPU-only libtorch from scripts/setup.sh; rerun it with GAIT_TORCH=cuda)"
                .into(),
        )),
    }
}

/// The cores this process may use (1 if unknown).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Arch, StdSpec};

    fn spec(layers: &[usize]) -> NetSpec {
        NetSpec { std: StdSpec::Fixed(vec![0.2; 10]), ..NetSpec::ff(40, 10, layers) }
    }

    #[test]
    fn resources_are_checked_with_numbers_in_the_message() {
        let small = spec(&[256, 256]);
        // Actor 41*256 + 257*256 + 257*10, critic with one output, plus 10 std entries.
        assert_eq!(
            small.num_params(),
            (41 * 256 + 257 * 256 + 257 * 10) + (41 * 256 + 257 * 256 + 257) + 10
        );
        assert_eq!(check_resources(&small, 2, 2, 10_000, Some(1 << 30)).unwrap(), None);
        let warning = check_resources(&small, 3, 2, 10_000, None).unwrap().expect("a warning");
        assert!(warning.contains("--workers 3 on 2 cores"), "{warning}");
        let err = check_resources(&small, 33, 2, 10_000, None).unwrap_err().to_string();
        assert!(
            err.contains("--workers 33 is more than 16 per core (2 cores, at most 32)"),
            "{err}"
        );
        let huge = spec(&[100_000, 100_000]);
        let err =
            check_resources(&huge, 2, 2, 10_000, Some(24_000_000_000)).unwrap_err().to_string();
        assert!(err.contains("--layers 100000,100000"), "{err}");
        assert!(err.contains("GB of memory available") && err.contains("24.0 GB"), "{err}");
        assert!(check_resources(&huge, 2, 2, 10_000, None).is_ok(), "no memory figure, no refusal");
        // The audit's D5: a buffer of 1e15 steps is refused before it grows.
        let err = check_resources(&small, 2, 2, 1_000_000_000_000_000, Some(24_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--num-steps 1000000000000000: one iteration's"), "{err}");
    }

    /// The estimate matches the networks libtorch builds (up to the std entries, which are a
    /// buffer unless learned).
    #[test]
    fn the_parameter_estimate_matches_the_built_networks() {
        for arch in [Arch::Ff, Arch::Lstm] {
            let mut s = spec(&[32, 32]);
            s.arch = arch;
            let actor = crate::policies::Actor::new(&s, tch::Device::Cpu);
            let critic = crate::policies::Critic::new(&s, tch::Device::Cpu);
            let trainable: i64 = [actor.var_store(), critic.var_store()]
                .iter()
                .flat_map(|vs| vs.trainable_variables())
                .map(|t| t.numel() as i64)
                .sum();
            let estimate = s.num_params() as i64;
            assert!(
                (0..=10).contains(&(estimate - trainable)),
                "{arch:?}: {estimate} vs {trainable}"
            );
        }
    }

    #[test]
    fn lstm_parameters_count_four_gates() {
        let mut s = spec(&[8, 8]);
        s.arch = Arch::Lstm;
        let lstm = |i: u128, h: u128| 4 * (i + h + 2) * h;
        let expected = (lstm(40, 8) + lstm(8, 8) + 9 * 10) + (lstm(40, 8) + lstm(8, 8) + 9) + 10;
        assert_eq!(s.num_params(), expected);
    }
}
