//! Tree sparsity of a multibody's mass matrix (gait patch, see `GAIT_PATCH.md` at the crate
//! root).
//!
//! A link's body Jacobian is zero outside the DoFs of its ancestors (itself included): the
//! generalized velocities of other branches do not move it. So each link's contribution
//! `Jᵀ M J` to the mass matrix only touches the `k × k` block of its ancestor DoFs, `k` being
//! at most the DoFs on its path to the root (12 of 18 for a Cassie foot), and the same holds for
//! the Coriolis term `Jᵀ (I·C·dt)`. The dense code forms both over all `n` DoFs (`6·n² + 36·n`
//! multiply-adds each for the quadform, plus the Coriolis `gemm_tr`), twice for the quadform
//! (with and without the gyroscopic term). Here `M·J` is formed once on the `k` columns, the
//! symmetric part once as a triangle, and the gyroscopic difference as a `3 × k` update.

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
    /// Scratch: `M·J` on the link's columns, row-major `SPATIAL_DIM × k`.
    mj: Vec<Real>,
    /// Scratch: `G·J_w` (gyroscopic part) on the link's columns, `3 × k`.
    gj: Vec<Real>,
}

impl AncestorDofs {
    /// Recomputes the lists (cheap: one walk to the root per link; no allocation once the
    /// buffers have grown). Relies on parents preceding children, which `assembly_id`
    /// contiguity already requires.
    pub fn rebuild(&mut self, links: &MultibodyLinkVec) {
        self.dofs.clear();
        self.ranges.clear();
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
        }
    }

    /// The ancestor DoFs of link `i`.
    pub fn of(&self, i: usize) -> &[usize] {
        let (a, b) = self.ranges[i];
        &self.dofs[a..b]
    }

    /// Adds link `i`'s `Jᵀ M J` to `augmented` and `Jᵀ (M + G·dt) J` to `acc_augmented`, where
    /// `M = diag(mass) ⊕ inertia` and `G` is the gyroscopic derivative, on the link's ancestor
    /// DoFs only (the dense result, up to float rounding).
    #[allow(clippy::too_many_arguments)]
    pub fn add_quadforms(
        &mut self,
        i: usize,
        jacobian: &Jacobian<Real>,
        mass: [Real; DIM],
        inertia: &Matrix3<Real>,
        gyroscopic_dt: &Matrix3<Real>,
        augmented: &mut DMatrix<Real>,
        acc_augmented: &mut DMatrix<Real>,
    ) {
        let (a, b) = self.ranges[i];
        let k = b - a;
        self.mj.resize(SPATIAL_DIM * k, 0.0);
        self.gj.resize(3 * k, 0.0);
        let cols = &self.dofs[a..b];
        for (c, &col) in cols.iter().enumerate() {
            let j = jacobian.column(col);
            for r in 0..DIM {
                self.mj[r * k + c] = mass[r] * j[r];
            }
            for r in 0..3 {
                let (mut m, mut g) = (0.0, 0.0);
                for s in 0..3 {
                    m += inertia[(r, s)] * j[DIM + s];
                    g += gyroscopic_dt[(r, s)] * j[DIM + s];
                }
                self.mj[(DIM + r) * k + c] = m;
                self.gj[r * k + c] = g;
            }
        }
        for (p, &row) in cols.iter().enumerate() {
            let jr = jacobian.column(row);
            for (q, &col) in cols.iter().enumerate().skip(p) {
                let mut sym = 0.0;
                for r in 0..SPATIAL_DIM {
                    sym += jr[r] * self.mj[r * k + q];
                }
                augmented[(row, col)] += sym;
                acc_augmented[(row, col)] += sym;
                if q != p {
                    augmented[(col, row)] += sym;
                    acc_augmented[(col, row)] += sym;
                }
            }
            // The gyroscopic term is not symmetric: the full row.
            for (q, &col) in cols.iter().enumerate() {
                let mut gyro = 0.0;
                for r in 0..3 {
                    gyro += jr[DIM + r] * self.gj[r * k + q];
                }
                acc_augmented[(row, col)] += gyro;
            }
        }
    }

    /// Adds link `i`'s `Jᵀ · i_coriolis_dt` to `acc_augmented` on its ancestor DoFs (the
    /// Coriolis matrix of a link is zero outside them too).
    pub fn add_coriolis(
        &self,
        i: usize,
        jacobian: &Jacobian<Real>,
        i_coriolis_dt: &Jacobian<Real>,
        acc_augmented: &mut DMatrix<Real>,
    ) {
        let cols = self.of(i);
        for &row in cols {
            let jr = jacobian.column(row);
            for &col in cols {
                let ic = i_coriolis_dt.column(col);
                let mut sum = 0.0;
                for r in 0..SPATIAL_DIM {
                    sum += jr[r] * ic[r];
                }
                acc_augmented[(row, col)] += sum;
            }
        }
    }
}
