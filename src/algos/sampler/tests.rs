use super::*;
use crate::algos::tracking;
use crate::envs::{CartPole, Step};
use crate::policies::{Nonlinearity, StdSpec};
use tch::Tensor;

/// How a [`Faulty`] cart-pole goes wrong.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    /// Its reward turns NaN.
    NanReward,
    /// Its simulation "blows up": a garbage observation and reward, and [`Env::diverged`], as
    /// MuJoCo's reset of a non-finite state.
    BlowUp,
}

/// Cart-pole that goes wrong from its `at`-th step of each episode on.
struct Faulty {
    inner: CartPole,
    fault: Fault,
    at: usize,
    t: usize,
}

/// What a [`Fault::BlowUp`] step returns as its observation (and, once, as its reward).
const GARBAGE: [f32; 4] = [1e6; 4];

impl Faulty {
    fn new(fault: Fault, at: usize) -> Self {
        Self { inner: CartPole::new(), fault, at, t: 0 }
    }
}

impl Env for Faulty {
    fn observation_size(&self) -> usize {
        4
    }
    fn action_size(&self) -> usize {
        1
    }
    fn seed(&mut self, seed: u64) {
        self.inner.seed(seed)
    }
    fn reset(&mut self) -> &[f32] {
        self.t = 0;
        self.inner.reset()
    }
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        self.t += 1;
        if self.t < self.at {
            return self.inner.step(action);
        }
        match self.fault {
            Fault::NanReward => Step { reward: f32::NAN, ..self.inner.step(action) },
            Fault::BlowUp => Step { obs: &GARBAGE, reward: GARBAGE[0], done: false, info: &[] },
        }
    }
    fn diverged(&self) -> bool {
        self.fault == Fault::BlowUp && self.t >= self.at
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
    CollectRequest {
        iteration: 0,
        timesteps: 0,
        stage_from: None,
        levels: Default::default(),
        seed: 9,
        num_steps,
        traj_len: 50,
        num_eval: 3,
        num_select: 0,
        select_len: 20,
        select_commands: SelectionCommands::Eval,
        select_push: 0.0,
    }
}

#[test]
fn nan_from_an_env_names_the_worker_and_seed() {
    let spec = spec();
    let envs: Vec<Box<dyn Env>> = vec![Box::new(Faulty::new(Fault::NanReward, 4))];
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
    // Where the workers' time went: training and evaluation jobs, no selection asked for.
    let j = got.job_seconds;
    assert!(j.train > 0.0 && j.eval > 0.0 && j.select == 0.0, "{j:?}");
    assert!(j.select.is_sign_positive(), "none is +0, not −0 (\"-0\" in timing.csv)");
}

/// Cart-pole whose critic also reads the step count / 100: an env with a critic observation
/// of its own.
struct WithCriticObs {
    inner: CartPole,
    critic: Vec<f32>,
    t: u32,
}

impl WithCriticObs {
    fn new() -> Self {
        Self { inner: CartPole::new(), critic: vec![0.0; 5], t: 0 }
    }

    fn write(critic: &mut [f32], obs: &[f32], t: u32) {
        critic[..4].copy_from_slice(obs);
        critic[4] = t as f32 / 100.0;
    }
}

impl Env for WithCriticObs {
    fn observation_size(&self) -> usize {
        4
    }
    fn action_size(&self) -> usize {
        1
    }
    fn seed(&mut self, seed: u64) {
        self.inner.seed(seed)
    }
    fn reset(&mut self) -> &[f32] {
        self.t = 0;
        let obs = self.inner.reset();
        Self::write(&mut self.critic, obs, 0);
        obs
    }
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        self.t += 1;
        let step = self.inner.step(action);
        Self::write(&mut self.critic, step.obs, self.t);
        step
    }
    fn critic(&self) -> Option<&dyn crate::envs::PrivilegedCritic> {
        Some(self)
    }
}

impl crate::envs::PrivilegedCritic for WithCriticObs {
    fn critic_observation_size(&self) -> usize {
        5
    }
    fn critic_observation(&self) -> &[f32] {
        &self.critic
    }
}

/// With a critic observation of its own, the buffer stores it beside each state, and the
/// values recorded for GAE are the critic's on it, not on the policy's observation.
#[test]
fn an_env_s_critic_observation_is_stored_and_valued() {
    let spec = NetSpec { critic_obs_dim: Some(5), ..spec() };
    tch::manual_seed(4);
    let critic = Critic::new(&spec, Device::Cpu);
    let policy = PolicySnapshot::of(0, &Actor::new(&spec, Device::Cpu), &critic);
    let envs: Vec<Box<dyn Env>> = vec![Box::new(WithCriticObs::new())];
    let mut pool = SamplerPool::spawn(envs, &spec, 0.99, 0.95).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let got = rt.block_on(pool.collect(&request(200), policy)).unwrap();
    let b = &got.train;
    let (critic_states, dim) = b.critic_view();
    assert_eq!((dim, critic_states.len()), (5, b.len() * 5));
    for k in 0..b.num_trajs() {
        for (t, i) in (b.traj_idx[k]..b.traj_idx[k + 1]).enumerate() {
            let row = &critic_states[i * 5..i * 5 + 5];
            assert_eq!(&row[..4], &b.states[i * 4..i * 4 + 4], "step {i}");
            assert_eq!(row[4], t as f32 / 100.0, "step {i}: the state the action came from");
        }
    }
    let values =
        tch::no_grad(|| critic.value(&Tensor::from_slice(critic_states).view([b.len() as i64, 5])));
    let values: Vec<f32> = Vec::try_from(values.flatten(0, -1)).unwrap();
    for (i, (v, r)) in values.iter().zip(&b.values).enumerate() {
        assert!((v - r).abs() < 1e-5, "step {i}: recorded {r}, critic {v}");
    }
    assert_eq!(got.eval.critic_view().0.len(), got.eval.len() * 5);
}

/// A step whose simulation blew up is dropped, not learned from: the trajectory keeps the
/// two steps before it, is cut there (bootstrapped from the critic, not ended at 0), and the
/// collection counts it.
#[test]
fn a_step_whose_simulation_blew_up_cuts_the_trajectory_before_it() {
    let spec = spec();
    tch::manual_seed(5);
    let envs: Vec<Box<dyn Env>> = vec![Box::new(Faulty::new(Fault::BlowUp, 3))];
    let mut pool = SamplerPool::spawn(envs, &spec, 0.99, 0.95).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let got = rt.block_on(pool.collect(&request(20), snapshot(&spec))).unwrap();
    let b = &got.train;
    assert!(b.num_trajs() >= 10);
    assert_eq!(got.physics_resets, b.num_trajs(), "every train episode blew up");
    assert!(b.ep_lens.iter().all(|&n| n == 2), "{:?}", b.ep_lens);
    assert!(b.rewards.iter().all(|&r| r < 1e5) && b.states.iter().all(|&s| s < 1e5));
    for k in 0..b.num_trajs() {
        let last = b.traj_idx[k + 1] - 1;
        // GAE's last step: return = r + γ V(s') when cut; r when terminated (V(s') = 0).
        assert!((b.returns[last] - b.rewards[last]).abs() > 1e-6, "trajectory {k}: not cut");
    }
    assert_eq!(got.eval.ep_lens, vec![2, 2, 2], "evaluations are cut the same way");
}

/// Cart-pole with two eval commands and two "physics models" that reports, as its metrics,
/// what the sampler set up: `forward_speed` = model + command x, `lateral_speed` = v when its
/// pushes were `UpTo(v)` (0: off), else −1 (the env's own pushes).
struct Models {
    inner: CartPole,
    model: Option<usize>,
    push: f32,
    command: f32,
    metrics: [crate::envs::RewardTerm; 2],
}

impl Env for Models {
    fn observation_size(&self) -> usize {
        4
    }
    fn action_size(&self) -> usize {
        1
    }
    fn seed(&mut self, seed: u64) {
        self.inner.seed(seed)
    }
    fn reset(&mut self) -> &[f32] {
        self.inner.reset()
    }
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let model = self.model.map_or(-100.0, |m| m as f32);
        self.metrics = [("forward_speed", model + self.command), ("lateral_speed", self.push)];
        self.inner.step(action)
    }
    fn metrics(&self) -> &[crate::envs::RewardTerm] {
        &self.metrics
    }
    fn walking(&self) -> Option<&dyn crate::envs::Walking> {
        Some(self)
    }
    fn walking_mut(&mut self) -> Option<&mut dyn crate::envs::Walking> {
        Some(self)
    }
}

impl crate::envs::Walking for Models {
    fn set_command(&mut self, command: &[f32]) -> Result<(), crate::envs::CommandError> {
        self.command = command[0];
        Ok(())
    }
    fn set_push(&mut self, pushes: crate::envs::Pushes) -> Result<(), crate::envs::CommandError> {
        self.push = match pushes {
            crate::envs::Pushes::UpTo(v) => v,
            _ => -1.0,
        };
        Ok(())
    }
    fn eval_commands(&self) -> &'static [[f32; 3]] {
        &[[1.0, 0.0, 0.0], [0.5, 0.0, 0.0]]
    }
    fn eval_models(&self) -> usize {
        2
    }
    fn set_eval_model(&mut self, model: Option<usize>) -> Result<(), crate::envs::CommandError> {
        self.model = model;
        Ok(())
    }
    fn clear_command(&mut self) {}
}

/// Selection episodes (`--best-by tracking`) run eval command `k % n` on model
/// `(k / n) % models` without pushes (pushed up to `--selection-push` with it), come back
/// apart from the eval episodes, and change neither the training trajectories nor the
/// evaluation (which draws its model and keeps its pushes).
#[test]
fn selection_episodes_run_every_command_on_every_model_and_change_nothing_else() {
    let spec = spec();
    let env = || -> Box<dyn Env> {
        Box::new(Models {
            inner: CartPole::new(),
            model: None,
            push: -1.0,
            command: 0.0,
            metrics: [("forward_speed", 0.0), ("lateral_speed", 0.0)],
        })
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    // Seeded weights, and selection episodes of 8 steps: with unseeded weights and 20 steps,
    // no eval episode outlived the selection's length in about half the runs of this test.
    tch::manual_seed(6);
    let policy = snapshot(&spec);
    let collect_pushed = |num_select, select_push| {
        let mut pool = SamplerPool::spawn(vec![env(), env()], &spec, 0.99, 0.95).unwrap();
        let req = CollectRequest { num_select, select_len: 8, select_push, ..request(300) };
        rt.block_on(pool.collect(&req, Arc::clone(&policy))).unwrap()
    };
    let collect = |num_select| collect_pushed(num_select, 0.0);
    let (plain, selected) = (collect(0), collect(4));
    assert!(plain.select_episodes.is_empty());
    let seen: Vec<(f64, f64)> =
        selected.select_episodes.iter().map(|e| (e.metrics[0].1, e.metrics[1].1)).collect();
    // forward = model + command x; lateral 0: pushes up to 0, none.
    assert_eq!(seen, [(1.0, 0.0), (0.5, 0.0), (2.0, 0.0), (1.5, 0.0)]);
    let commands: Vec<_> = selected.select_episodes.iter().map(|e| e.command).collect();
    assert_eq!(commands, [Some([1.0, 0.0, 0.0]), Some([0.5, 0.0, 0.0])].repeat(2));
    // Selection episodes run up to their own length (8 here), evaluations to --traj-len (50).
    assert!(selected.select_episodes.iter().all(|e| e.steps <= 8));
    assert!(selected.eval_episodes.iter().any(|e| e.steps > 8), "{:?}", selected.eval_episodes);
    for e in &selected.eval_episodes {
        // Evaluations draw their model (none forced) and keep the run's pushes.
        assert!(e.metrics[0].1 < -90.0 && e.metrics[1].1 == -1.0, "{:?}", e.metrics);
    }
    assert_eq!(plain.train.states, selected.train.states);
    assert_eq!(plain.train.actions, selected.train.actions);
    assert_eq!(plain.eval.rewards, selected.eval.rewards);
    assert_eq!(plain.eval_episodes, selected.eval_episodes);
    // `--selection-episodes 2`: the same cells again, in the same order (model `(k / n) % 2`).
    let twice: Vec<f64> = collect(8).select_episodes.iter().map(|e| e.metrics[0].1).collect();
    assert_eq!(twice, [1.0, 0.5, 2.0, 1.5].repeat(2));
    // `--selection-push 0.45`: the same cells, each pushed up to 0.45 m/s; training and the
    // evaluation unchanged.
    let pushed = collect_pushed(4, 0.45);
    let seen: Vec<(f64, f64)> =
        pushed.select_episodes.iter().map(|e| (e.metrics[0].1, e.metrics[1].1)).collect();
    let up_to = f64::from(0.45f32);
    assert_eq!(seen, [(1.0, up_to), (0.5, up_to), (2.0, up_to), (1.5, up_to)]);
    assert_eq!(plain.train.actions, pushed.train.actions);
    assert_eq!(plain.eval_episodes, pushed.eval_episodes);
}

/// `--selection-commands mirrored` on an env with eval commands but no command mirror: the
/// selection job fails with the setting named (the runner refuses it before the first
/// iteration, with the same words), instead of running the eval commands alone.
#[test]
fn a_mirrored_selection_needs_a_command_mirror() {
    let spec = spec();
    let env = Models {
        inner: CartPole::new(),
        model: None,
        push: -1.0,
        command: 0.0,
        metrics: [("forward_speed", 0.0), ("lateral_speed", 0.0)],
    };
    let err = tracking::selection_commands(&env, SelectionCommands::Mirrored).unwrap_err();
    assert!(err.to_string().contains("--selection-commands mirrored"), "{err}");
    let mut pool = SamplerPool::spawn(vec![Box::new(env)], &spec, 0.99, 0.95).unwrap();
    let req = CollectRequest {
        num_select: 2,
        select_commands: SelectionCommands::Mirrored,
        ..request(100)
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(pool.collect(&req, snapshot(&spec))).unwrap_err();
    assert!(format!("{err:#}").contains("--selection-commands mirrored"), "{err:#}");
}
