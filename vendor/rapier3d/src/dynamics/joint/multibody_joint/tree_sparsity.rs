//! Tree sparsity of a multibody's mass matrix (gait patch, see `GAIT_PATCH.md` at the crate
//! root).
//!
//! A link's body Jacobian is zero outside the DoFs of its ancestors (itself included): the
//! generalized velocities of other branches do not move it. So each link's contribution
//! `Jᵀ M J` to the mass matrix only touches the `k × k` block of its ancestor DoFs, `k` being
//! at most the DoFs on its path to the root (12 of 18 for a Cassie foot), and the same holds for
//! the Coriolis term `Jᵀ (I·C·dt)`. The dense code forms both over all `n` DoFs (`6·n² + 36·n`
//! multiply-adds each for the quadform, plus the Coriolis `gemm_tr`), twice for the quadform
//! (with and without the gyroscopic term). Here `M·J` and `M'·J` are formed on the `k` columns
//! only, and both products share one pass over the `k × k` block.

use crate::alloc_prelude::*;
use crate::math::{DIM, Jacobian, Real, SPATIAL_DIM};
use na::{DMatrix, Matrix3};

use super::multibody_link::MultibodyLinkVec;

/// For every link, the sorted generalized-coordinate indices of the DoFs of its ancestors
/// (itself included), flattened: link `i`'s are `dofs[ranges[i].0..ranges[i].1]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct AncestorDofs {
    dofs: Vec<usize>,
    ranges: Vec<(usize, usize)>,
    /// The same DoFs as contiguous `(first, count)` column spans, for nalgebra views:
    /// link `i`'s are `spans[span_ranges[i].0..span_ranges[i].1]`.
    spans: Vec<(usize, usize)>,
    span_ranges: Vec<(usize, usize)>,
    /// Scratch, one entry per ancestor column: `J`, `M·J` and `M'·J`.
    jc: Vec<[Real; SPATIAL_DIM]>,
    mj: Vec<[Real; SPATIAL_DIM]>,
    gj: Vec<[Real; SPATIAL_DIM]>,
}

impl AncestorDofs {
    /// Recomputes the lists (cheap: one walk to the root per link; no allocation once the
    /// buffers have grown). Relies on parents preceding children, which `assembly_id`
    /// contiguity already requires.
    pub fn rebuild(&mut self, links: &MultibodyLinkVec) {
        self.dofs.clear();
        self.ranges.clear();
        self.spans.clear();
        self.span_ranges.clear();
        for i in 0..links.len() {
            let start = self.dofs.len();
            let mut id = i;
            loop {
                let link = &links[id];
                let first = link.assembly_id;
                // Pushed leaf-to-root, reversed below into ascending order.
                for dof in (first..first + link.joint.ndofs()).rev() {
                    self.dofs.push(dof);
                }
                if id == 0 {
                    break;
                }
                id = link.parent_internal_id;
            }
            self.dofs[start..].reverse();
            self.ranges.push((start, self.dofs.len()));
            let first_span = self.spans.len();
            for &dof in &self.dofs[start..] {
                let extends = self.spans.len() > first_span;
                match self.spans.last_mut() {
                    Some((first, count)) if extends && *first + *count == dof => *count += 1,
                    _ => self.spans.push((dof, 1)),
                }
            }
            self.span_ranges.push((first_span, self.spans.len()));
        }
    }

    /// The ancestor DoFs of link `i` as contiguous `(first column, count)` spans.
    pub fn spans(&self, i: usize) -> &[(usize, usize)] {
        let (a, b) = self.span_ranges[i];
        &self.spans[a..b]
    }

    /// The ancestor DoFs of link `i`.
    pub fn of(&self, i: usize) -> &[usize] {
        let (a, b) = self.ranges[i];
        &self.dofs[a..b]
    }

    /// Adds link `i`'s `Jᵀ M J` to `augmented` and `Jᵀ M' J` to `acc_augmented`, where
    /// `M = diag(mass) ⊕ inertia` and `M'` the same with `augmented_inertia` (the gyroscopic
    /// term included), on the link's ancestor DoFs only. Every entry is the dense code's dot
    /// product in the dense code's order, minus terms that are exactly zero, so the matrices
    /// are bit-identical to the dense ones (the tests check this).
    #[allow(clippy::too_many_arguments)]
    pub fn add_quadforms(
        &mut self,
        i: usize,
        jacobian: &Jacobian<Real>,
        mass: [Real; DIM],
        inertia: &Matrix3<Real>,
        augmented_inertia: &Matrix3<Real>,
        augmented: &mut DMatrix<Real>,
        acc_augmented: &mut DMatrix<Real>,
    ) {
        let (a, b) = self.ranges[i];
        let cols = &self.dofs[a..b];
        let n = augmented.nrows();
        // Column-major slices: element (r, c) at c·n + r; the Jacobian's column c at 6c.
        let jac = jacobian.as_slice();
        let aug = augmented.as_mut_slice();
        let acc = acc_augmented.as_mut_slice();
        // Gather J's ancestor columns, then M·J and M'·J per column (nalgebra's `gemv` order).
        let times = |m: &Matrix3<Real>, w: &[Real]| -> [Real; 3] {
            core::array::from_fn(|r| m[(r, 0)] * w[0] + m[(r, 1)] * w[1] + m[(r, 2)] * w[2])
        };
        self.jc.clear();
        self.mj.clear();
        self.gj.clear();
        for &col in cols {
            let mut j = [0.0; SPATIAL_DIM];
            j.copy_from_slice(&jac[SPATIAL_DIM * col..SPATIAL_DIM * (col + 1)]);
            let (iw, aw) = (times(inertia, &j[DIM..]), times(augmented_inertia, &j[DIM..]));
            let (mut mj, mut gj) = ([0.0; SPATIAL_DIM], [0.0; SPATIAL_DIM]);
            for r in 0..DIM {
                mj[r] = mass[r] * j[r];
                gj[r] = mj[r];
                mj[DIM + r] = iw[r];
                gj[DIM + r] = aw[r];
            }
            self.jc.push(j);
            self.mj.push(mj);
            self.gj.push(gj);
        }
        for (jp, &row) in self.jc.iter().zip(cols) {
            for ((mq, gq), &col) in self.mj.iter().zip(&self.gj).zip(cols) {
                let (mut m, mut g) = (0.0, 0.0);
                for r in 0..SPATIAL_DIM {
                    m += jp[r] * mq[r];
                    g += jp[r] * gq[r];
                }
                aug[col * n + row] += m;
                acc[col * n + row] += g;
            }
        }
    }

    /// Adds link `i`'s `Jᵀ · i_coriolis_dt` to `acc_augmented` on its ancestor DoFs (the
    /// Coriolis matrix of a link is zero outside them too). Uses the columns of `J` gathered by
    /// the [`Self::add_quadforms`] call for the same link.
    pub fn add_coriolis(
        &self,
        i: usize,
        i_coriolis_dt: &Jacobian<Real>,
        acc_augmented: &mut DMatrix<Real>,
    ) {
        let cols = self.of(i);
        let n = acc_augmented.nrows();
        let ic = i_coriolis_dt.as_slice();
        let acc = acc_augmented.as_mut_slice();
        for &col in cols {
            let c = &ic[SPATIAL_DIM * col..SPATIAL_DIM * (col + 1)];
            for (jr, &row) in self.jc.iter().zip(cols) {
                let mut sum = 0.0;
                for r in 0..SPATIAL_DIM {
                    sum += jr[r] * c[r];
                }
                acc[col * n + row] += sum;
            }
        }
    }
}
