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

/// One trajectory whose actions above 0 earn more than those below.
fn buffer() -> Buffer {
    let mut b = Buffer::new(2, 1, 0.9, 0.95);
    for t in 0..64 {
        let x = (t as f32 / 64.0) - 0.5;
        let a = if t % 2 == 0 { 0.4 } else { -0.4 };
        b.push(&[x, -x], &[a], if a > 0.0 { 1.0 } else { 0.0 }, 0.0);
    }
    b.end_trajectory(0.0);
    b
}

/// Each update is one step (one minibatch) that lowers the critic's loss over repeated
/// updates and moves the mean action toward the rewarded sign.
#[test]
fn updates_fit_the_critic_and_follow_the_advantage() {
    // The seeded weights, whatever other tests draw meanwhile.
    let _init = crate::algos::seeding::INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    tch::manual_seed(0);
    let mut a2c = A2c::new(&spec(), A2cConfig { lr: 5e-3, ..A2cConfig::default() }, Device::Cpu);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let b = buffer();
    let obs = Tensor::from_slice(&[0.0f32, 0.0]).view([1, 2]);
    let first = a2c.update(&b, &mut rng).unwrap();
    assert_eq!((first.minibatches, first.early_stopped), (1, false));
    let mut last = first.clone();
    for _ in 0..100 {
        last = a2c.update(&b, &mut rng).unwrap();
    }
    assert!(last.critic_loss < 0.5 * first.critic_loss, "{first:?} -> {last:?}");
    // From one state, +2 earns 1 and −2 loses 1 (no discounting), far on either side of any
    // initial mean: whatever the critic's value, the advantage of +2 exceeds −2's, so a fresh
    // policy's mean action rises.
    let mut a2c = A2c::new(&spec(), A2cConfig { lr: 5e-3, ..A2cConfig::default() }, Device::Cpu);
    let mut contrast = Buffer::new(2, 1, 0.0, 0.0);
    for t in 0..64 {
        let a = if t % 2 == 0 { 2.0 } else { -2.0 };
        contrast.push(&[0.0, 0.0], &[a], if a > 0.0 { 1.0 } else { -1.0 }, 0.0);
    }
    contrast.end_trajectory(0.0);
    let before = a2c.actor().distribution(&obs).0.double_value(&[0, 0]);
    for _ in 0..10 {
        a2c.update(&contrast, &mut rng).unwrap();
    }
    let after = a2c.actor().distribution(&obs).0.double_value(&[0, 0]);
    assert!(after > before, "mean action {before} -> {after}");
}

/// A non-finite batch fails, names A2C, and changes no weight.
#[test]
fn a_non_finite_batch_is_refused() {
    let mut a2c = A2c::new(&spec(), A2cConfig::default(), Device::Cpu);
    let mut b = Buffer::new(2, 1, 0.9, 0.95);
    b.push(&[f32::NAN, 0.0], &[0.0], 1.0, 0.0);
    b.end_trajectory(0.0);
    let obs = Tensor::from_slice(&[0.1f32, 0.2]).view([1, 2]);
    let before = a2c.actor().distribution(&obs).0.double_value(&[0, 0]);
    let err = a2c.update(&b, &mut ChaCha8Rng::seed_from_u64(0)).unwrap_err().to_string();
    assert!(err.contains("during the A2C update"), "{err}");
    assert_eq!(a2c.actor().distribution(&obs).0.double_value(&[0, 0]), before);
}
