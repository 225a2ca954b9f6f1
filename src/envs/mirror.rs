//! Signed-index mirror lists: how an observation or action maps onto its left/right mirror image.
//!
//! `out[i] = sign(idx[i]) * in[|idx[i]|]` (a gather), the convention of the reference
//! (roadrunner `mirror_tensor`). Index 0 cannot carry a sign as an integer, so the reference
//! writes it `0.1` / `-0.1` (robot lists use `0.01`): the fractional part is dropped and only the
//! sign is kept. Lists are validated once, at construction: mirroring twice must be the identity.

use thiserror::Error;

/// Why mirror lists were refused.
#[derive(Debug, Error, PartialEq)]
pub enum MirrorError {
    #[error("mirror list has {got} entries but the vector has {expected}")]
    /// The list's length is not the vector's.
    WrongLength {
        /// The vector's size.
        expected: usize,
        /// The list's length.
        got: usize,
    },
    #[error("mirror list entry {pos} is {value}: not a finite index below {len}")]
    /// An entry is not an index of the vector.
    OutOfRange {
        /// The entry's position.
        pos: usize,
        /// Its value.
        value: f64,
        /// The vector's size.
        len: usize,
    },
    #[error("mirror list is not a permutation: index {index} appears more than once")]
    /// An index appears twice.
    NotPermutation {
        /// The index.
        index: usize,
    },
    #[error("mirror list is not an involution: mirroring twice changes entry {pos}")]
    /// Mirroring twice is not the identity.
    NotInvolution {
        /// The entry that changes.
        pos: usize,
    },
}

/// A validated signed permutation that is its own inverse.
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorIndices {
    source: Vec<usize>,
    sign: Vec<f32>,
}

impl MirrorIndices {
    /// Parses a reference-style list (`-3` = "take element 3, negated"; `±0.1` = element 0).
    pub fn new(list: &[f64]) -> Result<Self, MirrorError> {
        let len = list.len();
        let mut source = Vec::with_capacity(len);
        let mut sign = Vec::with_capacity(len);
        let mut seen = vec![false; len];
        for (pos, &value) in list.iter().enumerate() {
            let index = value.abs().trunc();
            if !value.is_finite() || index >= len as f64 {
                return Err(MirrorError::OutOfRange { pos, value, len });
            }
            let index = index as usize;
            if std::mem::replace(&mut seen[index], true) {
                return Err(MirrorError::NotPermutation { index });
            }
            source.push(index);
            sign.push(if value.is_sign_negative() { -1.0 } else { 1.0 });
        }
        let m = Self { source, sign };
        // Involution: out[out[i]] must be in[i] with sign +1.
        for pos in 0..len {
            let j = m.source[pos];
            if m.source[j] != pos || m.sign[pos] * m.sign[j] != 1.0 {
                return Err(MirrorError::NotInvolution { pos });
            }
        }
        Ok(m)
    }

    /// Like [`MirrorIndices::new`], also checking the list matches a vector of `expected` entries.
    pub fn with_len(list: &[f64], expected: usize) -> Result<Self, MirrorError> {
        if list.len() != expected {
            return Err(MirrorError::WrongLength { expected, got: list.len() });
        }
        Self::new(list)
    }

    /// Entries (the vector size it mirrors).
    pub fn len(&self) -> usize {
        self.source.len()
    }

    /// Whether it mirrors nothing.
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// Source index of each output element.
    pub fn source(&self) -> &[usize] {
        &self.source
    }

    /// Sign (+1 or -1) of each output element.
    pub fn sign(&self) -> &[f32] {
        &self.sign
    }

    /// Mirrors `input` into `out` (both of length [`MirrorIndices::len`]).
    pub fn apply(&self, input: &[f32], out: &mut [f32]) {
        assert_eq!(input.len(), self.len(), "mirror input length");
        assert_eq!(out.len(), self.len(), "mirror output length");
        for ((o, &s), &g) in out.iter_mut().zip(&self.source).zip(&self.sign) {
            *o = g * input[s];
        }
    }

    /// Mirrors every row of a row-major `[n, len]` slice.
    pub fn apply_rows(&self, input: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; input.len()];
        for (i, o) in input.chunks_exact(self.len()).zip(out.chunks_exact_mut(self.len())) {
            self.apply(i, o);
        }
        out
    }
}

/// An env's left/right symmetry as signed-permutation lists ([`MirrorIndices`]), for the mirror
/// loss and mirror augmentation.
pub trait Mirrored {
    /// Signed-permutation mirror list for observations (left/right symmetry), if the env has one.
    fn observation_mirror_indices(&self) -> Option<MirrorIndices>;
    /// Signed-permutation mirror list for the critic's own observation, if the env has one
    /// (mirror augmentation needs it).
    fn critic_observation_mirror_indices(&self) -> Option<MirrorIndices> {
        None
    }
    /// Signed-permutation mirror list for actions, if the env has one.
    fn action_mirror_indices(&self) -> Option<MirrorIndices>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_with_signs_and_zero_encoding() {
        let m = MirrorIndices::new(&[-0.1, -2.0, -1.0, 3.0]).unwrap();
        let mut out = [0.0; 4];
        m.apply(&[1.0, 2.0, 3.0, 4.0], &mut out);
        assert_eq!(out, [-1.0, -3.0, -2.0, 4.0]);
        let mut back = [0.0; 4];
        m.apply(&out, &mut back);
        assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn rejects_bad_lists() {
        assert_eq!(MirrorIndices::new(&[0.0, 0.0]), Err(MirrorError::NotPermutation { index: 0 }));
        assert!(matches!(MirrorIndices::new(&[0.0, 2.0]), Err(MirrorError::OutOfRange { .. })));
        // A 3-cycle is a permutation but not an involution.
        assert!(matches!(
            MirrorIndices::new(&[1.0, 2.0, 0.1]),
            Err(MirrorError::NotInvolution { .. })
        ));
        // Swap with inconsistent signs: mirroring twice negates.
        assert!(matches!(MirrorIndices::new(&[-1.0, 0.1]), Err(MirrorError::NotInvolution { .. })));
        assert_eq!(
            MirrorIndices::with_len(&[0.0], 2),
            Err(MirrorError::WrongLength { expected: 2, got: 1 })
        );
    }
}
