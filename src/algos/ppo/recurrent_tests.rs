use super::*;
use crate::envs::MirrorIndices;
use crate::policies::{Arch, Nonlinearity, StdSpec};

fn lstm_spec() -> NetSpec {
    NetSpec {
        arch: Arch::Lstm,
        nonlinearity: Nonlinearity::Tanh,
        std: StdSpec::Learned,
        ..NetSpec::ff(3, 2, &[8, 8])
    }
}

fn hyper(mirror: f64) -> PpoConfig {
    PpoConfig {
        a_lr: 1e-3,
        c_lr: 1e-3,
        epochs: 1,
        batch_size: 3,
        kl: f64::INFINITY,
        entropy_coeff: 0.01,
        grad_clip: 1.0,
        mirror,
        ..PpoConfig::default()
    }
}

/// Three trajectories of lengths 4, 2, 5 with varied data.
fn buffer() -> Buffer {
    let mut b = Buffer::new(3, 2, 0.9, 0.95);
    let mut x = 0.3f32;
    for len in [4, 2, 5] {
        for _ in 0..len {
            x = (x * 3.7 + 0.11).fract();
            b.push(&[x, -x * 0.5, x * x], &[x - 0.5, 0.2 - x], x, x * 0.3);
        }
        b.end_trajectory(0.1);
    }
    b
}

fn mirror_lists() -> (MirrorIndices, MirrorIndices) {
    (MirrorIndices::new(&[-0.1, -1.0, 2.0]).unwrap(), MirrorIndices::new(&[1.0, 0.0]).unwrap())
}

fn optim(mirror: f64) -> PpoOptim {
    tch::manual_seed(7);
    let (o, a) = mirror_lists();
    PpoOptim::new(&lstm_spec(), hyper(mirror), Device::Cpu, Some(&Symmetry::new(o, a))).unwrap()
}

fn perturb_params(optim: &PpoOptim) {
    // Make the new policy differ from the old one so ratio and KL are not trivial.
    tch::no_grad(|| {
        for (_, mut p) in optim.actor().var_store().variables() {
            if p.requires_grad() {
                let _ = p.g_add_scalar_(0.01);
            }
        }
    });
}

#[test]
fn masked_losses_equal_the_unpadded_computation() {
    let b = buffer();
    let optim = optim(1.0);
    let full = optim.full_batch(&b);
    assert_eq!(full.states.size(), vec![5, 3, 3], "time-major, padded to the longest");
    perturb_params(&optim);
    let padded = optim.losses(&full);
    // Each trajectory alone, without padding, weighted by its length.
    let lens = [4i64, 2, 5];
    let mut sums = [0.0f64; 5];
    for (k, &len) in lens.iter().enumerate() {
        let idx = Tensor::from_slice(&[k as i64]);
        let one = full.select(|x| x.index_select(1, &idx).narrow(0, 0, len));
        assert_eq!(one.mask.sum(Kind::Float).double_value(&[]), len as f64);
        let l = optim.losses(&one);
        let w = len as f64;
        sums[0] += w * l.actor.double_value(&[]);
        sums[1] += w * l.critic.double_value(&[]);
        sums[2] += w * l.mirror.double_value(&[]);
        sums[3] += w * l.penalties.double_value(&[]);
        sums[4] += w * l.kl;
    }
    let total = 11.0;
    let got = [
        padded.actor.double_value(&[]),
        padded.critic.double_value(&[]),
        padded.mirror.double_value(&[]),
        padded.penalties.double_value(&[]),
        padded.kl,
    ];
    for (i, (g, s)) in got.iter().zip(sums).enumerate() {
        assert!((g - s / total).abs() < 1e-5, "term {i}: padded {g} vs unpadded {}", s / total);
    }
    assert!(got[4] > 0.0, "the perturbed policy has a KL");
}

fn grads(optim: &mut PpoOptim, batch: &Batch) -> Vec<Tensor> {
    optim.actor_opt.zero_grad();
    optim.critic_opt.zero_grad();
    let l = optim.losses(batch);
    (&l.actor + &l.penalties + &l.mirror + &l.critic).backward();
    let mut out = Vec::new();
    for vs in [optim.actor().var_store(), optim.critic().var_store()] {
        let vars: std::collections::BTreeMap<_, _> = vs.variables().into_iter().collect();
        out.extend(vars.values().filter(|t| t.requires_grad()).map(|t| t.grad().copy()));
    }
    out
}

#[test]
fn padding_never_leaks_into_gradients() {
    let b = buffer();
    let mut optim = optim(1.0);
    let full = optim.full_batch(&b);
    perturb_params(&optim);
    let clean = grads(&mut optim, &full);
    // Overwrite every padded entry of every input with garbage.
    let pad = full.mask.eq(0.0);
    let junk = |x: &Tensor| x.masked_fill(&pad, 123.0);
    let dirty = Batch { mask: full.mask.shallow_clone(), ..full.select(junk) };
    let noisy = grads(&mut optim, &dirty);
    assert_eq!(clean.len(), noisy.len());
    for (a, b) in clean.iter().zip(&noisy) {
        let diff = (a - b).abs().max().double_value(&[]);
        assert!(diff < 1e-7, "padding changed a gradient by {diff}");
    }
}

/// An odd function (tanh, no biases, identity normalizer) mirrors exactly under
/// "negate everything" lists: its mirror loss is 0; with biases it is not.
#[test]
fn mirror_loss_vanishes_for_a_symmetric_policy() {
    let spec = NetSpec {
        nonlinearity: Nonlinearity::Tanh,
        std: StdSpec::Fixed(vec![0.3]),
        ..NetSpec::ff(2, 1, &[16, 16])
    };
    let obs = MirrorIndices::new(&[-0.1, -1.0]).unwrap();
    let act = MirrorIndices::new(&[-0.1]).unwrap();
    let mut b = Buffer::new(2, 1, 0.99, 0.95);
    for t in 0..32 {
        let x = (t as f32 * 0.37).sin();
        b.push(&[x, 0.5 - x], &[x * 0.1], 1.0, 0.0);
    }
    b.end_trajectory(0.0);
    tch::manual_seed(3);
    let optim =
        PpoOptim::new(&spec, hyper(1.0), Device::Cpu, Some(&Symmetry::new(obs, act))).unwrap();
    let asymmetric = optim.losses(&optim.full_batch(&b)).mirror.double_value(&[]);
    tch::no_grad(|| {
        for (name, mut p) in optim.actor().var_store().variables() {
            if name.ends_with(".bias") {
                let _ = p.zero_();
            }
        }
    });
    let symmetric = optim.losses(&optim.full_batch(&b)).mirror.double_value(&[]);
    assert!(symmetric < 1e-12, "{symmetric}");
    assert!(asymmetric > 1e-6, "{asymmetric}");
}

#[test]
fn mirror_augmentation_adds_mirrored_trajectories() {
    let b = buffer();
    let (o, a) = mirror_lists();
    let mut hp = hyper(0.0);
    hp.mirror_augment = true;
    tch::manual_seed(7);
    let mut optim =
        PpoOptim::new(&lstm_spec(), hp, Device::Cpu, Some(&Symmetry::new(o, a))).unwrap();
    let full = optim.full_batch(&b);
    assert_eq!(full.states.size(), vec![5, 6, 3], "3 trajectories + 3 mirrored");
    let original = full.states.narrow(1, 0, 3);
    let mirrored = full.states.narrow(1, 3, 3);
    let sign = Tensor::from_slice(&[-1.0f32, -1.0, 1.0]);
    let expected = original.index_select(2, &Tensor::from_slice(&[0i64, 1, 2])) * sign;
    assert!(mirrored.equal(&expected));
    assert!(full.mask.narrow(1, 3, 3).equal(&full.mask.narrow(1, 0, 3)));
    let mut rng = rand::SeedableRng::seed_from_u64(0);
    let rng: &mut rand_chacha::ChaCha8Rng = &mut rng;
    let stats = optim.optimize(&b, rng).unwrap();
    assert_eq!(stats.samples, 2 * 11, "each real step and its mirror, one epoch");
}
