//! The walking task's side of an episode: the gait clock, the commands and how long each is
//! held, and the reference gait's offsets under the action.

use rand::Rng;

use super::CassieEnv;
use crate::envs::cassie::clock::GaitClock;
use crate::envs::cassie::commands::CommandKind;

impl CassieEnv {
    /// A new gait: the default walk, or with `--full-gait` swing ratios U(0.4, 0.7), cycle time
    /// U(0.6, 1.0) s, and in 30% of draws shifted phases `[U(±0.5), 0.5 + U(±0.5)]`.
    /// The current clock is kept (the caller sets the phase) when the new gait is the same one, so a reset
    /// does not rebuild its von Mises table: without `--full-gait` every gait is the default
    /// walk, and rebuilding it at every reset cost 1.6 % of `gait bench env --env cassie`'s
    /// instructions (callgrind), which resets on every fall.
    pub(super) fn renew_clock(&mut self) {
        let (cycle, swing, shift) = if self.config.full_gait {
            let swing = self.rng.gen_range(0.4..0.7);
            let cycle = self.rng.gen_range(0.6..1.0);
            let shift = if self.rng.gen::<f64>() < 0.3 {
                [self.rng.gen_range(-0.5..0.5), 0.5 + self.rng.gen_range(-0.5..0.5)]
            } else {
                [0.0, 0.5]
            };
            (cycle, [swing, swing], shift)
        } else {
            (self.config.cycle_time_at(self.command.x), [0.5, 0.5], [0.0, 0.5])
        };
        if !self.clock.is_gait(cycle, self.config.policy_rate, swing, shift, 0.1) {
            self.clock = GaitClock::new(cycle, self.config.policy_rate, swing, shift, 0.1);
        }
    }

    /// With [`CassieConfig::cadence`], sets the gait cycle for the command now in force,
    /// keeping the phase's fraction of the cycle so the legs carry on where they were.
    pub(super) fn retime_clock(&mut self) {
        if self.config.cadence > 0.0 && !self.config.full_gait {
            self.clock.retime(self.config.cycle_time_at(self.command.x));
        }
    }

    /// Policy steps between command draws in the episode starting now: the distribution's,
    /// or [`CassieConfig::command_hold`]'s for forward commands once the perturbations have
    /// begun (training only).
    pub(super) fn redraw_interval(&mut self) -> u32 {
        let kind = self.config.commands_at(self.training, self.stage_from);
        let hold = self.config.command_hold;
        if kind == CommandKind::Forward && hold > 0.0 && self.perturbed() {
            let lo = (hold * self.config.policy_rate).round().max(1.0) as u32;
            self.rng.gen_range(lo..2 * lo)
        } else {
            kind.next_redraw(&mut self.rng)
        }
    }

    pub(super) fn new_command(&mut self) {
        self.command = match self.fixed_command.or(self.episode_command) {
            Some(c) => c,
            None => {
                let kind = match (
                    self.config.commands_at(self.training, self.stage_from),
                    self.training,
                ) {
                    (CommandKind::Omni | CommandKind::OmniWalk, Some(t))
                        if self.config.omni_ramp > 0
                            && self.rng.gen::<f64>() >= self.config.omni_share_at(t) =>
                    {
                        CommandKind::Forward
                    }
                    (kind, _) => kind,
                };
                kind.sample(&mut self.rng, self.config.omni_axes_at(self.training))
            }
        };
    }

    /// The reference gait's offsets at the current clock phase and command.
    pub(super) fn update_reference(&mut self) {
        let vm = self.clock.von_mises();
        let swing = [vm[0] as f32, vm[1] as f32];
        let at = if self.prenormalizing { Some(0) } else { self.training };
        let gait = self.config.gait_at(at, self.stage_from);
        let error = self.velocity_error();
        gait.offsets(swing, &self.command, error, &mut self.reference);
        self.stepping_gain = gait.stepping_gain(&self.command, error);
    }
}
