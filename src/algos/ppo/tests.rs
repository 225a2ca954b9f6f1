use super::*;
use crate::policies::{Nonlinearity, StdSpec};
use rand::SeedableRng;

fn spec() -> NetSpec {
    NetSpec {
        nonlinearity: Nonlinearity::Tanh,
        std: StdSpec::Fixed(vec![0.3]),
        ..NetSpec::ff(2, 1, &[16])
    }
}

fn hyper(kl: f64) -> PpoConfig {
    PpoConfig { a_lr: 1e-3, c_lr: 1e-3, batch_size: 8, kl, grad_clip: 1.0, ..PpoConfig::default() }
}

fn buffer(reward: f32) -> Buffer {
    let mut b = Buffer::new(2, 1, 0.99, 0.95);
    for t in 0..64 {
        let x = t as f32 / 64.0;
        b.push(&[x, -x], &[x - 0.5], if t == 10 { reward } else { x }, 0.0);
    }
    b.end_trajectory(0.0);
    b
}

#[test]
fn update_lowers_the_critic_loss() {
    tch::manual_seed(0);
    let mut optim = PpoOptim::new(&spec(), hyper(f64::INFINITY), Device::Cpu, None).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let b = buffer(0.5);
    let first = optim.optimize(&b, &mut rng).unwrap();
    assert_eq!(first.minibatches, 3 * 8);
    let mut last = first.clone();
    for _ in 0..20 {
        last = optim.optimize(&b, &mut rng).unwrap();
    }
    assert!(last.critic_loss < 0.5 * first.critic_loss, "{first:?} -> {last:?}");
}

#[test]
fn kl_threshold_stops_the_update_early() {
    tch::manual_seed(0);
    let mut optim = PpoOptim::new(&spec(), hyper(1e-12), Device::Cpu, None).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let stats = optim.optimize(&buffer(0.5), &mut rng).unwrap();
    assert!(stats.early_stopped);
    // The first minibatch measures KL 0 (nothing changed yet); the second exceeds it.
    assert_eq!(stats.minibatches, 2);
}

#[test]
fn non_finite_batch_fails_with_a_dump() {
    let dir = tempfile::tempdir().unwrap();
    let mut optim = PpoOptim::new(&spec(), hyper(0.02), Device::Cpu, None).unwrap();
    optim.set_dump_dir(dir.path().to_path_buf());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let err = optim.optimize(&buffer(f32::NAN), &mut rng).unwrap_err().to_string();
    assert!(err.contains("non-finite values in returns, advantages"), "{err}");
    let dump = dir.path().join("training_error.safetensors");
    assert!(err.contains(&dump.display().to_string()), "{err}");
    let tensors = Tensor::read_safetensors(&dump).unwrap();
    assert!(tensors.iter().any(|(n, _)| n == "returns"));
}

#[test]
fn mirror_without_lists_is_refused() {
    let mut hp = hyper(0.02);
    hp.mirror = 1.0;
    let err = PpoOptim::new(&spec(), hp, Device::Cpu, None).err().unwrap().to_string();
    assert!(err.contains("needs observation and action mirror lists"), "{err}");
}
