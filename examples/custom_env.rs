//! Your own env, trained with gait's PPO through the library: no registration, no fork.
//!
//! `Reach` is a point mass on a line that must reach a goal drawn at random in [-1, 1] and
//! stay there: observation `[position, velocity, goal]`, one action (a force, clipped to
//! [-1, 1]), reward `1 - |position - goal|` per step, 100 steps per episode. It is left/right
//! symmetric, so it also gives mirror lists and trains with the mirror loss.
//!
//! The example trains it for 40k steps (about 10 s on 2 cores), evaluates the final policy,
//! and compares it with random actions; then exports it to ONNX with its env's controller
//! (`gait::export::export_with`: the actions as they are) and checks that ONNX Runtime gives
//! gait's actions. It exits 1 unless the policy beats random clearly and the export matches
//! (CI runs it through `make test`).
//!
//!     cargo run --release --example custom_env

use anyhow::{ensure, Result};
use gait::algos::local_sampler;
use gait::algos::runner::Runner;
use gait::config::{Start, TrainConfig};
use gait::envs::{Env, EnvFactory, MirrorIndices, Mirrored, Step};
use gait::export::{ActorCheckpoint, ExportOptions, Format};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DT: f32 = 0.05;
const STEPS: usize = 100;

/// The env: it owns its observation buffer, so a step does not allocate.
struct Reach {
    obs: [f32; 3],
    rng: ChaCha8Rng,
}

impl Reach {
    fn new() -> Self {
        Self { obs: [0.0; 3], rng: ChaCha8Rng::seed_from_u64(0) }
    }
}

impl Env for Reach {
    fn observation_size(&self) -> usize {
        3
    }

    fn action_size(&self) -> usize {
        1
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) -> &[f32] {
        self.obs = [self.rng.gen_range(-0.1..0.1), 0.0, self.rng.gen_range(-1.0..1.0)];
        &self.obs
    }

    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let force = action[0].clamp(-1.0, 1.0);
        let [x, v, goal] = self.obs;
        let v = v + (4.0 * force - 2.0 * v) * DT;
        let x = (x + v * DT).clamp(-2.0, 2.0);
        self.obs = [x, v, goal];
        Step { obs: &self.obs, reward: 1.0 - (x - goal).abs(), done: false, info: &[] }
    }

    /// Mirrored, every value changes sign (`-0.1` is index 0 negated, the reference's
    /// convention).
    // Optional capabilities come through accessors: this env is left/right symmetric.
    fn mirror(&self) -> Option<&dyn Mirrored> {
        Some(self)
    }
}

impl Mirrored for Reach {
    fn observation_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[-0.1, -1.0, -2.0]).ok()
    }

    fn action_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[-0.1]).ok()
    }
}

/// Mean return of uniform random actions over `episodes` episodes.
fn random_return(episodes: u64) -> f64 {
    let mut env = Reach::new();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut total = 0.0;
    for e in 0..episodes {
        env.seed(e);
        env.reset();
        for _ in 0..STEPS {
            total += env.step(&[rng.gen_range(-1.0..1.0)]).reward as f64;
        }
    }
    total / episodes as f64
}

fn main() -> Result<()> {
    // The defaults, then what suits a small env; `run.env` only names the run's folder.
    let mut config = TrainConfig::default();
    config.run.env = "reach".into();
    config.run.timesteps = 40_000;
    config.sampler.traj_len = STEPS;
    config.sampler.num_steps = 4000;
    config.net.layers = vec![64, 64];
    config.net.std = 0.5;
    config.ppo_mut().a_lr = 1e-3;
    config.ppo_mut().c_lr = 1e-3;
    config.sampler.gae_lambda = 0.95;
    config.ppo_mut().grad_clip = 0.5;
    config.ppo_mut().epochs = 5;
    config.ppo_mut().mirror = 1.0;
    config.eval.eval_freq = 5;
    config.eval.num_eval_eps = 8;

    let env: EnvFactory = std::sync::Arc::new(|| Ok(Box::new(Reach::new()) as Box<dyn Env>));
    let mut runner =
        Runner::start_with(&config, env, &Start::Fresh, vec![], &mut (), &local_sampler)?;
    while !runner.is_done() {
        let report = runner.iterate(&mut |_| {})?;
        println!("{}", report.terminal_line());
    }
    let trained = runner.final_eval()?.map(|e| e.mean_return).unwrap_or(f64::NAN);
    let random = random_return(50);
    println!("run dir {}", runner.run_dir().display());
    println!("final policy: return {trained:.1} per episode; random actions: {random:.1}");
    ensure!(
        trained > random + 25.0,
        "the trained policy ({trained:.1}) does not beat random actions ({random:.1}) by 25"
    );
    export_and_compare(runner.run_dir())
}

/// Exports the run's best policy to ONNX beside it and checks ONNX Runtime's actions against
/// gait's on 200 observations of the env.
fn export_and_compare(run: &std::path::Path) -> Result<()> {
    let out = run.join("reach.onnx");
    let options = ExportOptions {
        path: run.to_path_buf(),
        weights: ActorCheckpoint::Best,
        format: Format::Onnx,
        out: out.clone(),
        force: false,
    };
    let make = |_: &gait::logging::Experiment| Ok(Box::new(Reach::new()) as Box<dyn Env>);
    let sidecar = gait::export::export_with(&options, make, &mut std::io::stdout())?;
    let (mut onnx, _) = gait::export::runtime::OnnxPolicy::load(&out, &sidecar)?;
    let (_, actor, _) = gait::export::load_actor(run, ActorCheckpoint::Best)?;
    let mut env = Reach::new();
    let mut obs = env.reset().to_vec();
    let mut worst = 0.0f32;
    for _ in 0..200 {
        let (mean, _) = tch::no_grad(|| actor.step(&tch::Tensor::from_slice(&obs), &mut None));
        let ours = Vec::<f32>::try_from(mean)?;
        let mut theirs = [0.0f32];
        onnx.act(&obs, &mut theirs)?;
        worst = worst.max((ours[0] - theirs[0]).abs());
        obs = env.step(&ours).obs.to_vec();
    }
    println!("ONNX Runtime against gait over 200 steps: largest action difference {worst:.1e}");
    ensure!(worst < 1e-5, "the export's actions differ from gait's by {worst}");
    Ok(())
}
