use super::*;
use crate::envs::{CartPole, Step};
use crate::policies::{Nonlinearity, StdSpec};

/// Cart-pole whose reward turns NaN after a few steps.
struct NanAfter(CartPole, usize);

impl Env for NanAfter {
    fn observation_size(&self) -> usize {
        4
    }
    fn action_size(&self) -> usize {
        1
    }
    fn seed(&mut self, seed: u64) {
        self.0.seed(seed)
    }
    fn reset(&mut self) -> &[f32] {
        self.1 = 0;
        self.0.reset()
    }
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        self.1 += 1;
        let n = self.1;
        let mut step = self.0.step(action);
        if n > 3 {
            step.reward = f32::NAN;
        }
        step
    }
}

fn spec() -> NetSpec {
    NetSpec {
        nonlinearity: Nonlinearity::Tanh,
        std: StdSpec::Fixed(vec![0.5]),
        ..NetSpec::ff(4, 1, &[8])
    }
}

fn snapshot(spec: &NetSpec) -> Arc<PolicySnapshot> {
    PolicySnapshot::of(0, &Actor::new(spec, Device::Cpu), &Critic::new(spec, Device::Cpu))
}

fn request(num_steps: usize) -> CollectRequest {
    CollectRequest { iteration: 0, timesteps: 0, seed: 9, num_steps, traj_len: 50, num_eval: 3 }
}

#[test]
fn nan_from_an_env_names_the_worker_and_seed() {
    let spec = spec();
    let envs: Vec<Box<dyn Env>> = vec![Box::new(NanAfter(CartPole::new(), 0))];
    let mut pool = SamplerPool::spawn(envs, &spec, 0.99, 0.95).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(pool.collect(&request(100), snapshot(&spec))).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("sampler worker 0 failed"), "{msg}");
    assert!(msg.contains("env seed") && msg.contains("non-finite reward"), "{msg}");
}

/// Cart-pole that panics on its second reset.
struct PanicOnSecondReset(CartPole, usize);

impl Env for PanicOnSecondReset {
    fn observation_size(&self) -> usize {
        4
    }
    fn action_size(&self) -> usize {
        1
    }
    fn seed(&mut self, seed: u64) {
        self.0.seed(seed)
    }
    fn reset(&mut self) -> &[f32] {
        self.1 += 1;
        assert!(self.1 < 2, "simulated env crash");
        self.0.reset()
    }
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        self.0.step(action)
    }
}

#[test]
fn a_panicking_env_is_reported_and_does_not_hang() {
    let spec = spec();
    let envs: Vec<Box<dyn Env>> =
        vec![Box::new(PanicOnSecondReset(CartPole::new(), 0)), Box::new(CartPole::new())];
    let mut pool = SamplerPool::spawn(envs, &spec, 0.99, 0.95).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(pool.collect(&request(2000), snapshot(&spec))).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("sampler worker 0 failed"), "{msg}");
    assert!(msg.contains("panicked: simulated env crash"), "{msg}");
    drop(pool); // joins the threads: must not hang
}

#[test]
fn collects_a_prefix_of_whole_trajectories_and_the_eval_episodes() {
    let spec = spec();
    let envs: Vec<Box<dyn Env>> = vec![Box::new(CartPole::new()), Box::new(CartPole::new())];
    let mut pool = SamplerPool::spawn(envs, &spec, 0.99, 0.95).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let got = rt.block_on(pool.collect(&request(300), snapshot(&spec))).unwrap();
    assert!(got.train.len() >= 300);
    // Dropping the last trajectory would fall below num_steps: the prefix is minimal.
    let last = *got.train.ep_lens.last().unwrap();
    assert!(got.train.len() - last < 300);
    assert_eq!(got.train.len(), *got.train.traj_idx.last().unwrap());
    assert_eq!(got.eval.num_trajs(), 3);
    assert!(got.eval.values.iter().all(|&v| v == 0.0));
}
