use super::*;
use crate::envs::MirrorIndices;
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

/// With a critic observation of its own, the critic loss is computed on it (exactly
/// 0.5·mean((R − V(critic state))²)), and mirror augmentation mirrors it with its own list.
#[test]
fn the_critic_learns_from_its_own_observation() {
    let spec = NetSpec { critic_obs_dim: Some(3), ..spec() };
    let mut b = Buffer::new(2, 1, 0.99, 0.95).with_critic_dim(3);
    for t in 0..16 {
        let x = t as f32 / 16.0;
        b.push(&[x, -x], &[x - 0.5], x, 0.0);
        b.push_critic_state(&[x, -x, 10.0 * x]);
    }
    b.end_trajectory(0.0);
    tch::manual_seed(0);
    let optim = PpoOptim::new(&spec, hyper(0.02), Device::Cpu, None).unwrap();
    let full = optim.full_batch(&b);
    let critic_states = full.critic_states.as_ref().expect("its own observations");
    assert_eq!(critic_states.size(), vec![16, 3]);
    let expected = tch::no_grad(|| {
        let v: Tensor = optim.critic().value(critic_states);
        let loss: Tensor = 0.5 * (&full.returns - v).square().mean(Kind::Float);
        loss.double_value(&[])
    });
    let got = optim.losses(&full).critic.double_value(&[]);
    assert!((got - expected).abs() < 1e-6, "critic loss {got} vs {expected}");

    let obs = MirrorIndices::new(&[-0.1, -1.0]).unwrap();
    let act = MirrorIndices::new(&[-0.1]).unwrap();
    let critic = MirrorIndices::new(&[-0.1, -1.0, 2.0]).unwrap();
    let mut hp = hyper(0.02);
    hp.mirror_augment = true;
    let plain = Symmetry::new(obs.clone(), act.clone());
    let refused = PpoOptim::new(&spec, hp.clone(), Device::Cpu, Some(&plain)).err().unwrap();
    assert!(refused.to_string().contains("critic's own observation"), "{refused}");
    let symmetry = plain.with_critic(critic);
    let optim = PpoOptim::new(&spec, hp, Device::Cpu, Some(&symmetry)).unwrap();
    let full = optim.full_batch(&b);
    let c = full.critic_states.unwrap();
    assert_eq!(c.size(), vec![32, 3], "16 states and their mirror images");
    let mirrored = c.narrow(0, 16, 16);
    let original = c.narrow(0, 0, 16);
    let back =
        Tensor::stack(&[-original.select(1, 0), -original.select(1, 1), original.select(1, 2)], 1);
    assert_eq!(f64::try_from((mirrored - back).abs().max()).unwrap(), 0.0);
}

/// `--lr-decay`: the scale reaches both networks' Adam steps. At 0 an update leaves every
/// weight where it was; back at 1 the same update moves them.
#[test]
fn the_learning_rate_scale_reaches_both_optimizers() {
    let weights = |o: &PpoOptim| -> Vec<Tensor> {
        let mut all = o.actor().var_store().trainable_variables();
        all.extend(o.critic().var_store().trainable_variables());
        all.iter().map(|t| t.copy()).collect()
    };
    let same = |a: &[Tensor], b: &[Tensor]| a.iter().zip(b).all(|(x, y)| x.equal(y));
    tch::manual_seed(0);
    let mut optim = PpoOptim::new(&spec(), hyper(f64::INFINITY), Device::Cpu, None).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let before = weights(&optim);
    optim.set_lr_scale(0.0);
    optim.optimize(&buffer(0.5), &mut rng).unwrap();
    assert!(same(&before, &weights(&optim)), "a zero rate moved a weight");
    optim.set_lr_scale(1.0);
    optim.optimize(&buffer(0.5), &mut rng).unwrap();
    let after = weights(&optim);
    let n = optim.actor().var_store().trainable_variables().len();
    assert!(!same(&before[..n], &after[..n]) && !same(&before[n..], &after[n..]));
}

/// The update as it ran before the critic got its own thread: one thread, the actor's step
/// then the critic's, on the same minibatches.
fn sequential_update(optim: &mut PpoOptim, buffer: &Buffer, rng: &mut impl Rng) -> Vec<f64> {
    let full = optim.full_batch(buffer);
    let mut losses_seen = Vec::new();
    for _ in 0..optim.hp.epochs {
        for ids in buffer.minibatch_indices(optim.hp.batch_size, rng) {
            let idx = Tensor::from_slice(&ids);
            let batch = full.select(|x| x.index_select(0, &idx));
            let l = optim.losses(&batch);
            losses_seen.push(l.critic.double_value(&[]));
            optim.actor_opt.zero_grad();
            (&l.actor + &l.penalties + &l.mirror).backward();
            optim.actor_opt.clip_and_step(optim.hp.grad_clip);
            optim.critic_opt.zero_grad();
            l.critic.backward();
            optim.critic_opt.clip_and_step(optim.hp.grad_clip);
        }
    }
    losses_seen
}

/// Every parameter of both networks, flattened, in name order.
fn parameters(optim: &PpoOptim) -> Vec<f32> {
    let mut out = Vec::new();
    for vs in [optim.actor().var_store(), optim.critic().var_store()] {
        let mut vars: Vec<_> = vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, t) in vars {
            out.extend(Vec::<f32>::try_from(t.flatten(0, -1)).unwrap());
        }
    }
    out
}

/// The critic's thread changes where the work runs, not the numbers: after three updates the
/// weights equal, bit for bit, those of the single-threaded loop on the same minibatches.
#[test]
fn the_critics_thread_gives_the_sequential_numbers_bit_for_bit() {
    let spec = NetSpec { critic_obs_dim: None, ..NetSpec::ff(2, 1, &[32, 32]) };
    let hp = PpoConfig { batch_size: 8, ..hyper(f64::INFINITY) };
    let make = || PpoOptim::new(&spec, hp.clone(), Device::Cpu, None).unwrap();
    let (mut threaded, mut sequential) = (make(), make());
    // The same initial weights, copied (seeding libtorch's global generator would race with
    // the tests running beside this one).
    tch::no_grad(|| {
        for (from, to) in [
            (threaded.actor().var_store(), sequential.actor().var_store()),
            (threaded.critic().var_store(), sequential.critic().var_store()),
        ] {
            let to = to.variables();
            for (name, t) in from.variables() {
                to[&name].shallow_clone().copy_(&t);
            }
        }
    });
    let initial = parameters(&threaded);
    assert_eq!(initial, parameters(&sequential));
    let (mut r1, mut r2) =
        (rand_chacha::ChaCha8Rng::seed_from_u64(5), rand_chacha::ChaCha8Rng::seed_from_u64(5));
    for reward in [0.5, -1.0, 2.0] {
        let b = buffer(reward);
        let stats = threaded.optimize(&b, &mut r1).unwrap();
        let seen = sequential_update(&mut sequential, &b, &mut r2);
        assert_eq!(stats.minibatches, seen.len());
        let mean = seen.iter().sum::<f64>() / seen.len() as f64;
        assert_eq!(stats.critic_loss.to_bits(), mean.to_bits());
    }
    let (a, b) = (parameters(&threaded), parameters(&sequential));
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "the weights differ");
    // And the updates did change them: the comparison is not of two untouched nets.
    assert_ne!(initial, a);
}

/// Value clipping (`ppo.value_clip`): the loss is the larger of the plain squared error and the
/// one of the new value held within the clip of the value at collection, element by element;
/// off, the plain loss to the bit.
#[test]
fn value_clipping_takes_the_larger_of_the_two_errors() {
    tch::manual_seed(0);
    let mut b = buffer(0.5);
    // Values at collection far from what the fresh critic says, so the clip binds.
    for (t, v) in b.values.iter_mut().enumerate() {
        *v = if t % 2 == 0 { 3.0 } else { -3.0 };
    }
    let plain = PpoOptim::new(&spec(), hyper(0.02), Device::Cpu, None).unwrap();
    let full = plain.full_batch(&b);
    let inputs = full.critic_inputs();
    let loss = |clip: f64| {
        tch::no_grad(|| crate::algos::batch::critic_loss_clipped(plain.critic(), &inputs, clip))
            .double_value(&[])
    };
    let values = tch::no_grad(|| plain.critic().value(&inputs.states));
    let by_hand = |clip: f64| {
        let clipped = &inputs.old_values + (&values - &inputs.old_values).clamp(-clip, clip);
        let a = (&inputs.returns - &values).square();
        let m: Tensor = a.maximum(&(&inputs.returns - clipped).square());
        0.5 * m.mean(Kind::Float).double_value(&[])
    };
    let unclipped = loss(0.0);
    assert_eq!(unclipped.to_bits(), plain.losses(&full).critic.double_value(&[]).to_bits());
    assert!((loss(0.2) - by_hand(0.2)).abs() < 1e-6 && loss(0.2) > unclipped, "{unclipped}");
    let mut clipped = hyper(0.02);
    clipped.value_clip = 0.2;
    // The same critic's weights (seeds are shared with tests running beside this one).
    let mut with = PpoOptim::new(&spec(), clipped, Device::Cpu, None).unwrap();
    with.critic_mut().var_store_mut().copy(plain.critic().var_store()).unwrap();
    assert!((with.losses(&full).critic.double_value(&[]) - loss(0.2)).abs() < 1e-9);
}

/// The bounds loss (`ppo.bound_loss`): nothing while the action mean stays within ±1.1; past
/// it, the coefficient times the mean over steps of the squared excess, and a step on it pulls
/// the mean back.
#[test]
fn the_bounds_loss_penalizes_only_a_mean_past_the_soft_bound() {
    tch::manual_seed(0);
    let b = buffer(0.5);
    let mut hp = hyper(f64::INFINITY);
    hp.bound_loss = 0.5;
    let mut optim = PpoOptim::new(&spec(), hp, Device::Cpu, None).unwrap();
    let penalties = |o: &PpoOptim| o.losses(&o.full_batch(&b)).penalties.double_value(&[]);
    let mean = |o: &PpoOptim| {
        let full = o.full_batch(&b);
        tch::no_grad(|| o.actor().distribution(&full.states).0)
    };
    assert!(mean(&optim).abs().max().double_value(&[]) < 1.1);
    assert_eq!(penalties(&optim), 0.0);
    // Move every mean to about 3 through the output layer's bias.
    tch::no_grad(|| {
        for (name, mut t) in optim.actor_mut().var_store_mut().variables() {
            if name.ends_with("bias") && t.size() == [1] {
                let _ = t.fill_(3.0);
            }
        }
    });
    let mu = mean(&optim);
    assert!(mu.min().double_value(&[]) > 1.1, "{mu}");
    let by_hand: Tensor = 0.5 * (mu.abs() - 1.1).clamp_min(0.0).square().mean(Kind::Float);
    assert!((penalties(&optim) - by_hand.double_value(&[])).abs() < 1e-5);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    optim.optimize(&b, &mut rng).unwrap();
    assert!(
        mean(&optim).mean(Kind::Float).double_value(&[]) < mu.mean(Kind::Float).double_value(&[])
    );
}

/// `ppo.normalize_advantages = false` keeps the buffer's advantages in reward units.
#[test]
fn advantages_stay_in_reward_units_when_not_normalized() {
    let b = buffer(5.0);
    let mut hp = hyper(0.02);
    let normalized = PpoOptim::new(&spec(), hp.clone(), Device::Cpu, None).unwrap();
    hp.normalize_advantages = false;
    let raw = PpoOptim::new(&spec(), hp, Device::Cpu, None).unwrap();
    let values =
        |o: &PpoOptim| Vec::<f32>::try_from(o.full_batch(&b).advantages.flatten(0, -1)).unwrap();
    assert_eq!(values(&raw), b.advantages());
    assert_eq!(values(&normalized), b.normalized_advantages());
}

/// A buffer closed as the samplers close theirs, with last states (`--recompute-advantages`).
fn train_buffer() -> Buffer {
    let mut b = Buffer::new(2, 1, 0.99, 0.95);
    for (k, bootstrap) in [(0, true), (1, false)] {
        let n = 32;
        for t in 0..n {
            let x = (t + k * n) as f32 / 64.0;
            b.push(&[x, -x], &[x - 0.5], if t == 10 { 0.5 } else { x }, 0.0);
        }
        b.end_train_trajectory(&vec![0.1; n], &[1.0, -1.0], 0.3, bootstrap);
    }
    b
}

/// `ppo.recompute_advantages`: the first pass is the plain update's (so one epoch is the same
/// to the bit), later passes learn from targets the critic valued again (so three differ).
#[test]
fn recomputed_advantages_change_only_the_passes_after_the_first() {
    // One initial net for every arm (the global seed is shared with tests running beside this).
    let base = PpoOptim::new(&spec(), hyper(f64::INFINITY), Device::Cpu, None).unwrap();
    let weights = |recompute: bool, epochs: usize| {
        let hp = PpoConfig { recompute_advantages: recompute, epochs, ..hyper(f64::INFINITY) };
        let mut optim = PpoOptim::new(&spec(), hp, Device::Cpu, None).unwrap();
        optim.actor_mut().var_store_mut().copy(base.actor().var_store()).unwrap();
        optim.critic_mut().var_store_mut().copy(base.critic().var_store()).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        optim.optimize(&train_buffer(), &mut rng).unwrap();
        parameters(&optim)
    };
    assert_eq!(weights(true, 1), weights(false, 1));
    assert_ne!(weights(true, 3), weights(false, 3));
}

#[test]
fn recomputed_advantages_are_refused_with_a_recurrent_net_or_mirror_augmentation() {
    let hp = PpoConfig { recompute_advantages: true, ..hyper(0.02) };
    let lstm = NetSpec { arch: crate::policies::Arch::Lstm, ..spec() };
    let err = PpoOptim::new(&lstm, hp.clone(), Device::Cpu, None).err().unwrap().to_string();
    assert!(err.contains("--recompute-advantages works with feed-forward nets"), "{err}");
    let augment = PpoConfig { mirror_augment: true, ..hp };
    let err = PpoOptim::new(&spec(), augment, Device::Cpu, None).err().unwrap().to_string();
    assert!(err.contains("(this run has --mirror-augment)"), "{err}");
}
