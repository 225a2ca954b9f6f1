//! Seed derivation. Every trajectory is a pure function of (policy parameters, its job seed),
//! and the job seed depends only on (run seed, iteration, job kind, job number). Which worker
//! runs a job, and when, does not matter, so results are reproducible for any worker count.

/// SplitMix64 finalizer: a good 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Serializes seeding libtorch's global generator and initializing the networks, so that
/// initial weights depend on the seed only, even with several trainings in one process.
pub(crate) static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Derives an independent stream seed from a parent seed and a sequence of labels.
pub fn derive(seed: u64, labels: &[u64]) -> u64 {
    labels.iter().fold(mix(seed), |acc, &l| mix(acc ^ mix(l)))
}

/// Stream labels, so different uses of one seed never share a stream.
pub mod stream {
    pub const TRAIN_JOB: u64 = 1;
    pub const EVAL_JOB: u64 = 2;
    pub const MINIBATCH: u64 = 3;
    pub const INIT: u64 = 4;
    pub const ACTION_NOISE: u64 = 5;
    pub const PRENORM: u64 = 6;
    pub const SELECT_JOB: u64 = 7;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_separate_streams() {
        let a = derive(0, &[stream::TRAIN_JOB, 0, 1]);
        assert_eq!(a, derive(0, &[stream::TRAIN_JOB, 0, 1]));
        assert_ne!(a, derive(0, &[stream::EVAL_JOB, 0, 1]));
        assert_ne!(a, derive(0, &[stream::TRAIN_JOB, 1, 0]));
        assert_ne!(a, derive(1, &[stream::TRAIN_JOB, 0, 1]));
    }
}
