//! The terminal of `gait train`: a progress bar with the ETA toward `--timesteps`, and lines
//! printed above it (a [`TrainReport`]).

use std::io::Write;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use crate::algos::train::TrainReport;
use crate::algos::SetupEvents;

/// The terminal: a progress bar, and lines printed above it.
pub struct Terminal {
    bar: ProgressBar,
}

impl Terminal {
    /// A bar toward `total` training steps.
    pub fn new(total: u64) -> Self {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} steps ({rate}, ETA {eta}) {msg}",
            )
            .expect("a valid progress template")
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} steps/s", state.per_sec());
            })
            .progress_chars("=> "),
        );
        Self { bar }
    }
}

impl TrainReport for Terminal {
    fn say(&mut self, line: &str) {
        // Ignore a closed stdout (e.g. piped into `head`): training goes on.
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stdout(), "{line}");
        });
    }

    fn progress(&mut self, steps: u64) {
        self.bar.set_position(steps);
    }

    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl SetupEvents for Terminal {
    fn warning(&mut self, line: &str) {
        self.bar.suspend(|| crate::stdio::eline(line));
    }

    fn note(&mut self, line: &str) {
        self.bar.suspend(|| crate::stdio::eline(line));
    }

    fn prenorm(&mut self, n: usize, total: usize) {
        self.bar.set_message(if n == 0 {
            format!("prenormalizing ({total} steps)")
        } else if n < total {
            format!("prenormalizing ({n}/{total})")
        } else {
            String::new()
        });
    }
}
