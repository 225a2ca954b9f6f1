//! Trajectory buffer: variable-length trajectories stored back to back, with `traj_idx`
//! boundaries (`traj_idx[k]..traj_idx[k+1]` is trajectory `k`), as in roadrunner's `Buffer`.
//!
//! [`Buffer::end_trajectory`] closes the current trajectory and computes its GAE returns:
//! `δ_t = r_t + γ V_{t+1} − V_t` with `V_T = terminal_value` (0 if the episode terminated, the
//! critic's value of the last state if it was cut by the time limit), `gae_t = δ_t + γλ gae_{t+1}`,
//! `return_t = gae_t + V_t`. Advantages `return − V` are normalized over the whole iteration's
//! buffer by [`Buffer::normalized_advantages`] (unbiased std + 1e-4, the reference's constant).

use crate::envs::levels::TrackOutcome;
use rand::seq::SliceRandom;
use rand::Rng;

/// The trajectories of one iteration, flat, with `traj_idx` marking where each starts; returns and advantages are computed per finished trajectory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Buffer {
    obs_dim: usize,
    act_dim: usize,
    /// Values per critic observation; 0: the critic reads `states`.
    #[serde(default)]
    critic_dim: usize,
    discount: f64,
    gae_lambda: f64,
    /// Observations, `obs_dim` per step.
    pub states: Vec<f32>,
    /// The critic's own observations, `critic_dim` per step (empty without them).
    #[serde(default)]
    pub critic_states: Vec<f32>,
    /// Actions taken, `act_dim` per step.
    pub actions: Vec<f32>,
    /// Rewards, one per step.
    pub rewards: Vec<f32>,
    /// The critic's value of each state (train data; 0 in evaluations).
    pub values: Vec<f32>,
    /// Filled per trajectory by `end_trajectory`.
    pub returns: Vec<f32>,
    /// Trajectory boundaries; starts as `[0]`, one more entry per finished trajectory.
    pub traj_idx: Vec<usize>,
    /// Undiscounted return of each finished trajectory.
    pub ep_returns: Vec<f64>,
    /// Length of each finished trajectory, in steps.
    pub ep_lens: Vec<usize>,
    /// The value each finished trajectory's returns bootstrapped from (`V_T`: 0 where it
    /// terminated), so [`Buffer::rescale_rewards`] can compute them again.
    #[serde(default)]
    pub terminal_values: Vec<f32>,
    /// How the finished train trajectories went on their curriculum tracks, in trajectory
    /// order, for envs that report one ([`crate::envs::Walking::track_outcome`]).
    #[serde(default)]
    pub outcomes: Vec<TrackOutcome>,
    /// The critic's observation of the state each finished train trajectory ended in
    /// (`critic_view`'s size per trajectory), and whether its returns bootstrap from it (cut
    /// by the time limit) or not (terminated): what [`Buffer::recompute_returns`] needs to
    /// value the ends again. Empty for buffers closed without them.
    #[serde(default)]
    pub last_states: Vec<f32>,
    /// Per finished train trajectory: its returns bootstrap from its last state's value.
    #[serde(default)]
    pub bootstraps: Vec<bool>,
    /// The `(scale, clip)` [`Buffer::rescale_rewards`] last applied, so returns computed again
    /// use the same rewards.
    #[serde(default)]
    reward_scale: Option<(f64, f64)>,
    /// The σ the critic's values and targets are in units of ([`Buffer::rescale_values`]):
    /// values are multiplied by it before GAE and returns divided by it after. 1: raw units.
    #[serde(default = "one")]
    value_scale: f64,
}

/// Serde's default for [`Buffer`]'s `value_scale`.
fn one() -> f64 {
    1.0
}

impl Buffer {
    /// An empty buffer for `obs_dim` observations and `act_dim` actions, with GAE's γ and λ.
    pub fn new(obs_dim: usize, act_dim: usize, discount: f64, gae_lambda: f64) -> Self {
        Self {
            obs_dim,
            act_dim,
            critic_dim: 0,
            discount,
            gae_lambda,
            states: Vec::new(),
            critic_states: Vec::new(),
            actions: Vec::new(),
            rewards: Vec::new(),
            values: Vec::new(),
            returns: Vec::new(),
            traj_idx: vec![0],
            ep_returns: Vec::new(),
            terminal_values: Vec::new(),
            outcomes: Vec::new(),
            ep_lens: Vec::new(),
            last_states: Vec::new(),
            bootstraps: Vec::new(),
            reward_scale: None,
            value_scale: 1.0,
        }
    }

    /// The same buffer with the critic's own observations, `critic_dim` values per step
    /// ([`Buffer::push_critic_state`]; 0: the critic reads the policy's observations).
    pub fn with_critic_dim(mut self, critic_dim: usize) -> Self {
        self.critic_dim = critic_dim;
        self
    }

    /// Observation size.
    pub fn obs_dim(&self) -> usize {
        self.obs_dim
    }

    /// Whether the critic has observations of its own here ([`Buffer::with_critic_dim`]).
    pub fn has_critic_states(&self) -> bool {
        self.critic_dim > 0
    }

    /// What the critic reads: its own observations and their size, or the policy's.
    pub fn critic_view(&self) -> (&[f32], usize) {
        match self.critic_dim {
            0 => (&self.states, self.obs_dim),
            n => (&self.critic_states, n),
        }
    }

    /// Action size.
    pub fn act_dim(&self) -> usize {
        self.act_dim
    }

    /// Number of stored steps (including an unfinished trajectory).
    pub fn len(&self) -> usize {
        self.rewards.len()
    }

    /// Whether it holds no step.
    pub fn is_empty(&self) -> bool {
        self.rewards.is_empty()
    }

    /// Number of finished trajectories.
    pub fn num_trajs(&self) -> usize {
        self.traj_idx.len() - 1
    }

    /// Appends one step to the current trajectory.
    pub fn push(&mut self, state: &[f32], action: &[f32], reward: f32, value: f32) {
        debug_assert_eq!(state.len(), self.obs_dim);
        debug_assert_eq!(action.len(), self.act_dim);
        self.states.extend_from_slice(state);
        self.actions.extend_from_slice(action);
        self.rewards.push(reward);
        self.values.push(value);
    }

    /// Appends the critic's observation of the step [`Buffer::push`] stores (buffers with a
    /// critic dimension only; one per step).
    pub fn push_critic_state(&mut self, state: &[f32]) {
        debug_assert_eq!(state.len(), self.critic_dim);
        self.critic_states.extend_from_slice(state);
    }

    /// Closes the current trajectory, computing its returns. No-op for an empty trajectory.
    pub fn end_trajectory(&mut self, terminal_value: f32) {
        let start = *self.traj_idx.last().expect("traj_idx starts non-empty");
        let end = self.len();
        if end == start {
            return;
        }
        let rewards = self.rewards[start..end].iter().map(|&r| r as f64);
        let values = &self.values[start..end];
        let returns = gae_returns(rewards, values, terminal_value, self.gae(), self.value_scale);
        self.returns.extend_from_slice(&returns);
        self.ep_returns.push(self.rewards[start..end].iter().map(|&r| r as f64).sum());
        self.ep_lens.push(end - start);
        self.terminal_values.push(terminal_value);
        self.traj_idx.push(end);
    }

    /// Computes every finished trajectory's returns again from its rewards times `scale`,
    /// each clipped to ±`clip`, the values it was collected with and its terminal value
    /// (`--scale-rewards`). The rewards and the episode returns stay as the env gave them.
    pub fn rescale_rewards(&mut self, scale: f64, clip: f64) {
        self.reward_scale = Some((scale, clip));
        self.compute_returns();
    }

    /// Computes every finished trajectory's returns again with the critic's values read as
    /// multiples of `sigma` (`--normalize-returns`): GAE runs on the raw rewards and
    /// `σ · value`, and the returns, the critic's targets, are stored divided by `σ`;
    /// [`Buffer::advantages`] multiplies back, so advantages stay in the rewards' units.
    pub fn rescale_values(&mut self, sigma: f64) {
        self.value_scale = sigma;
        self.compute_returns();
    }

    /// The returns in the rewards' own units: GAE-λ's returns times the value scale
    /// ([`Buffer::rescale_values`]).
    pub fn raw_returns(&self) -> impl Iterator<Item = f64> + '_ {
        self.returns.iter().map(|&g| g as f64 * self.value_scale)
    }

    /// Every finished trajectory's returns from its rewards (scaled as
    /// [`Buffer::rescale_rewards`] last said), `values` and `terminal_values`.
    fn compute_returns(&mut self) {
        let (scale, clip) = self.reward_scale.unwrap_or((1.0, f64::INFINITY));
        for k in 0..self.num_trajs() {
            let (start, end) = (self.traj_idx[k], self.traj_idx[k + 1]);
            let rewards =
                self.rewards[start..end].iter().map(|&r| (r as f64 * scale).clamp(-clip, clip));
            let (values, terminal) = (&self.values[start..end], self.terminal_values[k]);
            let returns = gae_returns(rewards, values, terminal, self.gae(), self.value_scale);
            self.returns[start..end].copy_from_slice(&returns);
        }
    }

    /// A copy with what computing the returns again needs (rewards, values, trajectory ends,
    /// bootstraps, the reward scale) and none of the states, actions or episode records: the
    /// working copy of `--recompute-advantages` ([`Buffer::recompute_returns`]), which would
    /// otherwise copy every observation each update.
    pub fn returns_only(&self) -> Self {
        Self {
            obs_dim: self.obs_dim,
            act_dim: self.act_dim,
            critic_dim: self.critic_dim,
            discount: self.discount,
            gae_lambda: self.gae_lambda,
            states: Vec::new(),
            critic_states: Vec::new(),
            actions: Vec::new(),
            rewards: self.rewards.clone(),
            values: self.values.clone(),
            returns: self.returns.clone(),
            traj_idx: self.traj_idx.clone(),
            ep_returns: Vec::new(),
            ep_lens: Vec::new(),
            terminal_values: self.terminal_values.clone(),
            outcomes: Vec::new(),
            last_states: Vec::new(),
            bootstraps: self.bootstraps.clone(),
            reward_scale: self.reward_scale,
            value_scale: self.value_scale,
        }
    }

    /// Values every finished step again (`values`, one per step) and every trajectory's end
    /// (`last_values`, one per trajectory, used where it bootstraps), then computes the
    /// returns again: PPO's advantages recomputed with the critic of the moment
    /// (`--recompute-advantages`).
    ///
    /// # Panics
    /// If the lengths do not match, or the buffer was closed without its last states.
    pub fn recompute_returns(&mut self, values: &[f32], last_values: &[f32]) {
        assert_eq!(values.len(), self.returns.len(), "one value per finished step");
        assert_eq!(last_values.len(), self.num_trajs(), "one last value per trajectory");
        assert_eq!(self.bootstraps.len(), self.num_trajs(), "closed with its last states");
        self.values[..values.len()].copy_from_slice(values);
        for ((t, &v), &boot) in
            self.terminal_values.iter_mut().zip(last_values).zip(&self.bootstraps)
        {
            *t = if boot { v } else { 0.0 };
        }
        self.compute_returns();
    }

    /// GAE's γ and λ.
    fn gae(&self) -> (f64, f64) {
        (self.discount, self.gae_lambda)
    }

    /// Sets the values of the open trajectory's steps, then closes it as
    /// [`Buffer::end_trajectory`] does. For a sampler that computes a trajectory's values in one
    /// batched forward after the episode instead of one per step (`AlgoSampler`).
    ///
    /// # Panics
    /// If `values` does not hold one value per step of the open trajectory.
    pub fn end_trajectory_with_values(&mut self, values: &[f32], terminal_value: f32) {
        let start = *self.traj_idx.last().expect("traj_idx starts non-empty");
        assert_eq!(values.len(), self.len() - start, "one value per step of the open trajectory");
        self.values[start..].copy_from_slice(values);
        self.end_trajectory(terminal_value);
    }

    /// [`Buffer::end_trajectory_with_values`] for a train trajectory, keeping the critic's
    /// observation of the state it ended in (`last_state`) and whether it bootstraps from that
    /// state's value `last_value` (`false`: it terminated, and bootstraps from 0).
    pub fn end_train_trajectory(
        &mut self,
        values: &[f32],
        last_state: &[f32],
        last_value: f32,
        bootstrap: bool,
    ) {
        debug_assert_eq!(last_state.len(), self.critic_view().1);
        let before = self.num_trajs();
        self.end_trajectory_with_values(values, if bootstrap { last_value } else { 0.0 });
        if self.num_trajs() > before {
            self.last_states.extend_from_slice(last_state);
            self.bootstraps.push(bootstrap);
        }
    }

    /// Appends all finished trajectories of `other` (the reference's `buffer + buffer`).
    pub fn append(&mut self, other: &Buffer) {
        assert_eq!(
            (self.obs_dim, self.act_dim, self.critic_dim),
            (other.obs_dim, other.act_dim, other.critic_dim),
            "buffer dims"
        );
        assert_eq!(self.len(), *self.traj_idx.last().unwrap(), "append after an open trajectory");
        let n = *other.traj_idx.last().unwrap();
        let offset = self.len();
        self.states.extend_from_slice(&other.states[..n * other.obs_dim]);
        self.critic_states.extend_from_slice(&other.critic_states[..n * other.critic_dim]);
        self.actions.extend_from_slice(&other.actions[..n * other.act_dim]);
        self.rewards.extend_from_slice(&other.rewards[..n]);
        self.values.extend_from_slice(&other.values[..n]);
        self.returns.extend_from_slice(&other.returns[..n]);
        self.traj_idx.extend(other.traj_idx[1..].iter().map(|i| i + offset));
        self.ep_returns.extend_from_slice(&other.ep_returns);
        self.ep_lens.extend_from_slice(&other.ep_lens);
        self.terminal_values.extend_from_slice(&other.terminal_values);
        self.outcomes.extend_from_slice(&other.outcomes);
        self.last_states.extend_from_slice(&other.last_states);
        self.bootstraps.extend_from_slice(&other.bootstraps);
    }

    /// `return − value` of every finished step (GAE's advantage: the returns are GAE-λ's), in
    /// the rewards' units (times the value scale of [`Buffer::rescale_values`]).
    pub fn advantages(&self) -> Vec<f32> {
        let scale = self.value_scale;
        self.returns
            .iter()
            .zip(&self.values)
            .map(|(&r, &v)| ((r - v) as f64 * scale) as f32)
            .collect()
    }

    /// The advantages an update trains on: [`Buffer::normalized_advantages`] or, unless
    /// `normalize`, [`Buffer::advantages`] as computed.
    pub fn training_advantages(&self, normalize: bool) -> Vec<f32> {
        if normalize {
            self.normalized_advantages()
        } else {
            self.advantages()
        }
    }

    /// `(return − value − mean) / (unbiased std + 1e-4)` over every finished step, in the
    /// rewards' units.
    pub fn normalized_advantages(&self) -> Vec<f32> {
        let (n, scale) = (self.returns.len(), self.value_scale);
        let adv: Vec<f64> = self
            .returns
            .iter()
            .zip(&self.values)
            .map(|(&r, &v)| (r as f64 - v as f64) * scale)
            .collect();
        let mean = adv.iter().sum::<f64>() / n.max(1) as f64;
        let var = adv.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
        let std = var.sqrt() + 1e-4;
        adv.iter().map(|a| ((a - mean) / std) as f32).collect()
    }

    /// Shuffled step indices in chunks of `batch_size`; the last partial chunk is dropped
    /// (the reference's `drop_last=True` for feed-forward minibatches).
    pub fn minibatch_indices(&self, batch_size: usize, rng: &mut impl Rng) -> Vec<Vec<i64>> {
        let mut idx: Vec<i64> = (0..self.returns.len() as i64).collect();
        idx.shuffle(rng);
        idx.chunks_exact(batch_size.max(1)).map(<[i64]>::to_vec).collect()
    }

    /// Shuffled trajectory ids in chunks of `batch_size` trajectories; the last chunk may be
    /// smaller (the reference's recurrent `drop_last=False`).
    pub fn trajectory_batches(&self, batch_size: usize, rng: &mut impl Rng) -> Vec<Vec<i64>> {
        let mut ids: Vec<i64> = (0..self.num_trajs() as i64).collect();
        ids.shuffle(rng);
        ids.chunks(batch_size.max(1)).map(<[i64]>::to_vec).collect()
    }

    /// Longest trajectory among `ids`.
    pub fn max_len(&self, ids: &[usize]) -> usize {
        ids.iter().map(|&k| self.traj_idx[k + 1] - self.traj_idx[k]).max().unwrap_or(0)
    }

    /// Time-major, zero-padded copy `[T, B, dim]` (T = longest of `ids`) of a per-step field
    /// with `dim` values per step (e.g. `&self.states`, `obs_dim`).
    pub fn pad(&self, field: &[f32], dim: usize, ids: &[usize]) -> Vec<f32> {
        let (t_max, b) = (self.max_len(ids), ids.len());
        let mut out = vec![0.0f32; t_max * b * dim];
        for (col, &k) in ids.iter().enumerate() {
            let (start, end) = (self.traj_idx[k], self.traj_idx[k + 1]);
            for t in 0..end - start {
                let src = &field[(start + t) * dim..(start + t + 1) * dim];
                out[(t * b + col) * dim..(t * b + col + 1) * dim].copy_from_slice(src);
            }
        }
        out
    }

    /// `[T, B]` mask, 1 on real steps and 0 on padding, matching [`Buffer::pad`].
    pub fn mask(&self, ids: &[usize]) -> Vec<f32> {
        let (t_max, b) = (self.max_len(ids), ids.len());
        let mut out = vec![0.0f32; t_max * b];
        for (col, &k) in ids.iter().enumerate() {
            for t in 0..self.traj_idx[k + 1] - self.traj_idx[k] {
                out[t * b + col] = 1.0;
            }
        }
        out
    }

    /// Mean undiscounted return of the finished trajectories (None: none finished).
    pub fn mean_ep_return(&self) -> Option<f64> {
        mean(self.ep_returns.iter().copied())
    }

    /// Mean length of the finished trajectories (None: none finished).
    pub fn mean_ep_len(&self) -> Option<f64> {
        mean(self.ep_lens.iter().map(|&l| l as f64))
    }
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> Option<f64> {
    let n = values.len();
    (n > 0).then(|| values.sum::<f64>() / n as f64)
}

/// One trajectory's GAE-λ returns (the module's formula) from its `rewards`, `values` and the
/// value `terminal` it bootstraps from, with `(γ, λ)`; values and returns in units of
/// `value_scale` ([`Buffer::rescale_values`]; 1: the rewards' units).
fn gae_returns(
    rewards: impl DoubleEndedIterator<Item = f64> + ExactSizeIterator,
    values: &[f32],
    terminal: f32,
    (gamma, lambda): (f64, f64),
    value_scale: f64,
) -> Vec<f32> {
    let mut returns = vec![0.0f32; values.len()];
    let mut next_value = terminal as f64 * value_scale;
    let mut gae = 0.0f64;
    for (t, r) in rewards.enumerate().rev() {
        let v = values[t] as f64 * value_scale;
        let delta = r + gamma * next_value - v;
        gae = delta + gamma * lambda * gae;
        returns[t] = ((gae + v) / value_scale) as f32;
        next_value = v;
    }
    returns
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn close(a: &[f32], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((*x as f64 - y).abs() < 1e-5, "{a:?} vs {b:?}");
        }
    }

    /// `recompute_returns`: the same values give the same returns; new ones give GAE's returns
    /// with them, a terminated trajectory ignoring its last value, under the reward scale
    /// `rescale_rewards` set.
    #[test]
    fn returns_are_recomputed_from_new_values_and_the_same_rewards() {
        let mut b = Buffer::new(1, 1, 0.9, 0.8);
        for (k, bootstrap) in [(0, true), (1, false)] {
            for t in 0..3 {
                b.push(&[t as f32], &[0.0], 1.0 + k as f32, 0.0);
            }
            b.end_train_trajectory(&[0.5, 1.0, 1.5], &[9.0], 2.0, bootstrap);
        }
        assert_eq!(
            (b.last_states.clone(), b.bootstraps.clone()),
            (vec![9.0, 9.0], vec![true, false])
        );
        assert_eq!(b.terminal_values, vec![2.0, 0.0]);
        b.rescale_rewards(0.5, 10.0);
        let before = b.returns.clone();
        let values = b.values.clone();
        b.recompute_returns(&values, &[2.0, 7.0]);
        assert_eq!(b.returns, before);
        b.recompute_returns(&[1.0; 6], &[3.0, 7.0]);
        let mut want = Buffer::new(1, 1, 0.9, 0.8);
        for (k, last) in [(0, 3.0), (1, 0.0)] {
            for _ in 0..3 {
                want.push(&[0.0], &[0.0], 0.5 * (1.0 + k as f32), 1.0);
            }
            want.end_trajectory(last);
        }
        assert_eq!(b.returns, want.returns);
        assert_eq!(b.values, vec![1.0; 6]);
    }

    /// Three short trajectories with γ = 0.9, λ = 0.8, values and returns computed by hand.
    #[test]
    fn gae_returns_match_hand_computation() {
        let mut b = Buffer::new(1, 1, 0.9, 0.8);
        // Trajectory 1: terminated (terminal value 0). r = [1, 2], V = [0.5, 1.0].
        b.push(&[0.0], &[0.0], 1.0, 0.5);
        b.push(&[0.0], &[0.0], 2.0, 1.0);
        b.end_trajectory(0.0);
        // δ1 = 2 + 0 - 1 = 1; gae1 = 1; R1 = 2.
        // δ0 = 1 + 0.9*1 - 0.5 = 1.4; gae0 = 1.4 + 0.72*1 = 2.12; R0 = 2.62.
        // Trajectory 2: cut by the time limit, bootstrapped with V(s_T) = 3. r = [0, 1, 0].
        b.push(&[0.0], &[0.0], 0.0, 2.0);
        b.push(&[0.0], &[0.0], 1.0, 2.5);
        b.push(&[0.0], &[0.0], 0.0, 2.0);
        b.end_trajectory(3.0);
        // δ2 = 0 + 2.7 - 2 = 0.7; gae2 = 0.7; R2 = 2.7.
        // δ1 = 1 + 1.8 - 2.5 = 0.3; gae1 = 0.3 + 0.72*0.7 = 0.804; R1 = 3.304.
        // δ0 = 0 + 2.25 - 2 = 0.25; gae0 = 0.25 + 0.72*0.804 = 0.82888; R0 = 2.82888.
        // Trajectory 3: single step, terminated. R = r = -1.
        b.push(&[0.0], &[0.0], -1.0, 0.0);
        b.end_trajectory(0.0);
        close(&b.returns, &[2.62, 2.0, 2.82888, 3.304, 2.7, -1.0]);
        assert_eq!(b.traj_idx, vec![0, 2, 5, 6]);
        assert_eq!(b.ep_lens, vec![2, 3, 1]);
        assert_eq!(b.ep_returns, vec![3.0, 1.0, -1.0]);
        assert_eq!(b.num_trajs(), 3);
    }

    #[test]
    fn lambda_one_gives_discounted_returns() {
        let mut b = Buffer::new(1, 1, 0.5, 1.0);
        for (r, v) in [(1.0, 7.0), (1.0, -3.0), (1.0, 0.25)] {
            b.push(&[0.0], &[0.0], r, v);
        }
        b.end_trajectory(8.0);
        // Values cancel out for λ = 1: R_t = Σ γ^k r + γ^(T-t) V_T.
        close(&b.returns, &[1.0 + 0.5 + 0.25 + 1.0, 1.0 + 0.5 + 2.0, 1.0 + 4.0]);
    }

    #[test]
    fn append_offsets_boundaries_and_advantages_are_normalized() {
        let mut a = Buffer::new(2, 1, 0.99, 0.95);
        a.push(&[1.0, 2.0], &[0.5], 1.0, 0.0);
        a.end_trajectory(0.0);
        let mut b = Buffer::new(2, 1, 0.99, 0.95);
        for i in 0..3 {
            b.push(&[i as f32, 0.0], &[0.0], i as f32, 0.1);
        }
        b.end_trajectory(0.0);
        a.append(&b);
        assert_eq!(a.traj_idx, vec![0, 1, 4]);
        assert_eq!(a.len(), 4);
        assert_eq!(a.states.len(), 8);
        let adv = a.normalized_advantages();
        let m: f32 = adv.iter().sum::<f32>() / 4.0;
        let var: f32 = adv.iter().map(|x| (x - m).powi(2)).sum::<f32>() / 3.0;
        assert!(m.abs() < 1e-5 && (var.sqrt() - 1.0).abs() < 1e-3, "{adv:?}");
    }

    /// The critic's own observations travel with their steps through `append`, and the critic
    /// reads them instead of the policy's.
    #[test]
    fn critic_states_are_appended_with_their_steps() {
        let mut a = Buffer::new(1, 1, 0.99, 0.95).with_critic_dim(2);
        assert_eq!(a.critic_view(), (&[][..], 2));
        let mut b = a.clone();
        let step = |buf: &mut Buffer, x: f32| {
            buf.push(&[x], &[0.0], 0.0, 0.0);
            buf.push_critic_state(&[x, -x]);
            buf.end_trajectory(0.0);
        };
        step(&mut a, 1.0);
        step(&mut b, 2.0);
        step(&mut b, 3.0);
        a.append(&b);
        assert_eq!(a.states, vec![1.0, 2.0, 3.0]);
        assert_eq!(a.critic_view(), (&[1.0, -1.0, 2.0, -2.0, 3.0, -3.0][..], 2));
        let plain = Buffer::new(1, 1, 0.99, 0.95);
        assert_eq!(plain.critic_view().1, 1, "without its own: the policy's observations");
    }

    /// Three trajectories of lengths 2, 3, 1 padded into time-major batches, by hand.
    #[test]
    fn pads_time_major_with_a_mask() {
        let mut b = Buffer::new(1, 1, 0.99, 1.0);
        for (k, len) in [2usize, 3, 1].into_iter().enumerate() {
            for t in 0..len {
                let x = (10 * (k + 1) + t) as f32; // 10, 11 | 20, 21, 22 | 30
                b.push(&[x], &[-x], 0.0, 0.0);
            }
            b.end_trajectory(0.0);
        }
        // Columns: trajectory 1 (len 3), trajectory 0 (len 2), trajectory 2 (len 1).
        let ids = [1, 0, 2];
        assert_eq!(b.max_len(&ids), 3);
        #[rustfmt::skip]
        let expected = vec![
            20.0, 10.0, 30.0,
            21.0, 11.0, 0.0,
            22.0, 0.0, 0.0,
        ];
        assert_eq!(b.pad(&b.states, 1, &ids), expected);
        assert_eq!(b.pad(&b.actions, 1, &ids), expected.iter().map(|x| -x).collect::<Vec<_>>());
        #[rustfmt::skip]
        let mask = vec![
            1.0, 1.0, 1.0,
            1.0, 1.0, 0.0,
            1.0, 0.0, 0.0,
        ];
        assert_eq!(b.mask(&ids), mask);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let batches = b.trajectory_batches(2, &mut rng);
        assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 1]);
        let mut all = batches.concat();
        all.sort();
        assert_eq!(all, vec![0, 1, 2]);
    }

    /// Values set after the episode close a trajectory as values pushed with each step do,
    /// and only the open trajectory's values change.
    #[test]
    fn values_set_at_the_end_match_values_pushed_per_step() {
        let (mut per_step, mut at_end) = (Buffer::new(1, 1, 0.9, 0.8), Buffer::new(1, 1, 0.9, 0.8));
        for b in [&mut per_step, &mut at_end] {
            b.push(&[0.0], &[0.0], 1.0, 0.5);
            b.end_trajectory(0.0);
        }
        for (r, v) in [(0.0, 2.0), (1.0, 2.5), (0.0, 2.0)] {
            per_step.push(&[0.0], &[0.0], r, v);
            at_end.push(&[0.0], &[0.0], r, 0.0);
        }
        per_step.end_trajectory(3.0);
        at_end.end_trajectory_with_values(&[2.0, 2.5, 2.0], 3.0);
        assert_eq!(per_step, at_end);
    }

    #[test]
    #[should_panic(expected = "one value per step")]
    fn values_for_another_length_are_refused() {
        let mut b = Buffer::new(1, 1, 0.9, 0.8);
        b.push(&[0.0], &[0.0], 1.0, 0.0);
        b.end_trajectory_with_values(&[1.0, 2.0], 0.0);
    }

    #[test]
    fn minibatches_cover_each_step_once_and_drop_the_remainder() {
        let mut b = Buffer::new(1, 1, 0.99, 1.0);
        for i in 0..10 {
            b.push(&[i as f32], &[0.0], 0.0, 0.0);
        }
        b.end_trajectory(0.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let batches = b.minibatch_indices(3, &mut rng);
        assert_eq!(batches.len(), 3);
        let mut all: Vec<i64> = batches.concat();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 9);
    }
}
