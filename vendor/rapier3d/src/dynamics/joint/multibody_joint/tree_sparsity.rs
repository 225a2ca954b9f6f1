//! The composite-rigid-body mass matrix of a multibody (gait patch, see `GAIT_PATCH.md` at the
//! crate root).
//!
//! A link's body Jacobian is zero outside the DoFs of its ancestors (itself included): the
//! generalized velocities of other branches do not move it. rapier forms each link's `Jᵀ M J`
//! (twice: with and without the gyroscopic term) and Coriolis term `Jᵀ (M·C·dt)` densely over
//! all `n` DoFs. Here all inertias and Coriolis wrenches are expressed about one reference
//! point, so a subtree's composite is a plain sum, and row `a` of either matrix is the DoF's
//! twist `s_a` against its link's composite: `O(n · depth)` small products per substep.

use crate::alloc_prelude::*;
use crate::math::{DIM, Jacobian, Real, SPATIAL_DIM};
use na::{DMatrix, Matrix3, Matrix6, Vector3, Vector6};

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
    /// Per link: its parent and its own DoFs as `(first, count)`; `rebuild` compares them
    /// with the links to skip the work when the topology is unchanged.
    parents: Vec<usize>,
    own: Vec<(usize, usize)>,
    /// Per link: the spatial inertia about the reference point without and with the
    /// gyroscopic term, then (after `add_composites`) the composite ones; and the
    /// centre of mass relative to the reference point.
    composite: Vec<Matrix6<Real>>,
    composite_augmented: Vec<Matrix6<Real>>,
    com: Vec<Vector3<Real>>,
    /// Per DoF: its twist at the reference point (linear, then angular).
    twists: Vec<Vector6<Real>>,
    /// Per link, a `6 × n` column-major block: its Coriolis term as wrenches about the
    /// reference point, then (after `add_composites`) the composite of its subtree.
    wrenches: Vec<Real>,
}

impl AncestorDofs {
    /// Recomputes the lists (cheap: one walk to the root per link; no allocation once the
    /// buffers have grown). Relies on parents preceding children, which `assembly_id`
    /// contiguity already requires.
    /// Returns whether anything changed.
    pub fn rebuild(&mut self, links: &MultibodyLinkVec) -> bool {
        let same = self.parents.len() == links.len()
            && links.iter().enumerate().all(|(i, link)| {
                self.parents[i] == link.parent_internal_id
                    && self.own[i] == (link.assembly_id, link.joint.ndofs())
            });
        if same {
            return false;
        }
        self.parents.clear();
        self.own.clear();
        let mut ndofs = 0;
        for link in links.iter() {
            self.parents.push(link.parent_internal_id);
            self.own.push((link.assembly_id, link.joint.ndofs()));
            ndofs = ndofs.max(link.assembly_id + link.joint.ndofs());
        }
        self.composite.resize(links.len(), Matrix6::zeros());
        self.composite_augmented.resize(links.len(), Matrix6::zeros());
        self.com.resize(links.len(), Vector3::zeros());
        self.twists.resize(ndofs, Vector6::zeros());
        self.wrenches.resize(SPATIAL_DIM * ndofs * links.len(), 0.0);
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
        true
    }

    /// Whether the lists were built for a multibody of `links` links (so `spans` may be read
    /// without a rebuild from a `&self` method; the kinematics rebuild them every substep).
    pub fn covers(&self, links: usize) -> bool {
        self.parents.len() == links
    }

    /// The ancestor DoFs of link `i` as contiguous `(first column, count)` spans.
    pub fn spans(&self, i: usize) -> &[(usize, usize)] {
        let (a, b) = self.span_ranges[i];
        &self.spans[a..b]
    }

    /// Records link `i`'s spatial inertia about the multibody's reference point, `r` being
    /// the link's centre of mass relative to it: `Tᵀ diag(mass, inertia) T` with
    /// `T = [[1, -[r]×], [0, 1]]` (the map from a twist at the reference point to the velocity
    /// of the centre of mass and the angular velocity, the rows of a rapier body Jacobian),
    /// once with `inertia` and once with `augmented_inertia` (the gyroscopic term included).
    pub fn set_link_inertia(
        &mut self,
        i: usize,
        r: &Vector3<Real>,
        mass: [Real; DIM],
        inertia: &Matrix3<Real>,
        augmented_inertia: &Matrix3<Real>,
    ) {
        let rx = r.cross_matrix();
        let dv = Matrix3::from_diagonal(&Vector3::from(mass));
        let top_right = -(dv * rx);
        let shifted = rx * dv * rx;
        let spatial = |angular: &Matrix3<Real>| {
            let mut m = Matrix6::zeros();
            m.fixed_view_mut::<3, 3>(0, 0).copy_from(&dv);
            m.fixed_view_mut::<3, 3>(0, 3).copy_from(&top_right);
            m.fixed_view_mut::<3, 3>(3, 0).copy_from(&top_right.transpose());
            m.fixed_view_mut::<3, 3>(3, 3).copy_from(&(angular - shifted));
            m
        };
        self.composite[i] = spatial(inertia);
        self.composite_augmented[i] = spatial(augmented_inertia);
        self.com[i] = *r;
    }

    /// Adds `Σ_i J_iᵀ M_i J_i` to `augmented` and the same with the gyroscopic term to
    /// `acc_augmented` by the composite-rigid-body algorithm, once every link's inertia was
    /// set with [`Self::set_link_inertia`]. All quantities are expressed at one reference
    /// point, so a link's composite inertia (its own plus its descendants') is a plain sum,
    /// and `M[a, b] = s_aᵀ I^c_l s_b` for DoF `a` of link `l` and `b` of `l` or an ancestor
    /// of `l`, `s` being the DoFs' twists at the reference point. That is `O(n · depth)` small
    /// dot products instead of one `k × k` quadform per link; the result equals the sum of
    /// quadforms to rounding (the tests compare them on random states).
    pub fn add_composites(
        &mut self,
        jacobians: &[Jacobian<Real>],
        augmented: &mut DMatrix<Real>,
        acc_augmented: &mut DMatrix<Real>,
    ) {
        let block = SPATIAL_DIM * augmented.nrows();
        for i in (1..self.parents.len()).rev() {
            let parent = self.parents[i];
            let (own, own_augmented) = (self.composite[i], self.composite_augmented[i]);
            self.composite[parent] += own;
            self.composite_augmented[parent] += own_augmented;
            let (head, tail) = self.wrenches.split_at_mut(block * i);
            let child = &tail[..block];
            for (p, c) in head[block * parent..block * (parent + 1)].iter_mut().zip(child) {
                *p += *c;
            }
        }
        for (l, &(first, count)) in self.own.iter().enumerate() {
            let r = self.com[l];
            for a in first..first + count {
                // The DoF's velocity of the link's centre of mass and angular velocity, moved
                // to the reference point: v_p = v_com - ω × r.
                let j = jacobians[l].column(a);
                let w = Vector3::new(j[3], j[4], j[5]);
                let v = Vector3::new(j[0], j[1], j[2]) - w.cross(&r);
                self.twists[a] = Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z);
            }
        }
        let n = augmented.nrows();
        // Column-major slices: element (row, col) at col·n + row.
        let aug = augmented.as_mut_slice();
        let acc = acc_augmented.as_mut_slice();
        for (l, &(first, count)) in self.own.iter().enumerate() {
            let (ic, ica) = (&self.composite[l], &self.composite_augmented[l]);
            let (lo, hi) = self.ranges[l];
            let wrenches = &self.wrenches[block * l..block * (l + 1)];
            for a in first..first + count {
                let s_a = &self.twists[a];
                let f = ic * s_a;
                let fa = ica * s_a;
                let ga = ica.tr_mul(s_a);
                for &b in self.dofs[lo..hi].iter().take_while(|&&b| b <= a) {
                    let s_b = &self.twists[b];
                    let m = s_b.dot(&f);
                    aug[a * n + b] += m;
                    acc[a * n + b] += s_b.dot(&fa);
                    if b != a {
                        aug[b * n + a] += m;
                        acc[b * n + a] += s_b.dot(&ga);
                    }
                }
                // The Coriolis term's row `a`: `s_a · W^c_l`, column by column.
                for (b, w) in wrenches.chunks_exact(SPATIAL_DIM).enumerate() {
                    let mut sum = 0.0;
                    for r in 0..SPATIAL_DIM {
                        sum += s_a[r] * w[r];
                    }
                    acc[b * n + a] += sum;
                }
            }
        }
    }

    /// Records link `i`'s Coriolis term `diag(mass·dt, inertia·dt) · [C_v; C_w]` (`6 × n`,
    /// non-zero on the link's ancestor columns) as wrenches about the reference point,
    /// `[y_v; y_w + r × y_v]`, for [`Self::add_composites`], which adds
    /// `Σ_i J_iᵀ (I·C·dt)_i` as `s_aᵀ W^c_l` by composites like the inertias.
    pub fn set_link_coriolis(
        &mut self,
        i: usize,
        coriolis_v: &[Real],
        coriolis_w: &[Real],
        mass_dt: [Real; DIM],
        inertia_dt: &Matrix3<Real>,
    ) {
        let block = SPATIAL_DIM * (coriolis_v.len() / DIM);
        let r = self.com[i];
        let (a, b) = self.span_ranges[i];
        let out = &mut self.wrenches[block * i..block * (i + 1)];
        out.fill(0.0);
        for &(c0, nc) in &self.spans[a..b] {
            for c in c0..c0 + nc {
                let cv = Vector3::from_column_slice(&coriolis_v[DIM * c..DIM * (c + 1)]);
                let cw = Vector3::from_column_slice(&coriolis_w[DIM * c..DIM * (c + 1)]);
                let yv = Vector3::from(mass_dt).component_mul(&cv);
                let yw = inertia_dt * cw + r.cross(&yv);
                out[SPATIAL_DIM * c..SPATIAL_DIM * c + DIM].copy_from_slice(yv.as_slice());
                out[SPATIAL_DIM * c + DIM..SPATIAL_DIM * (c + 1)].copy_from_slice(yw.as_slice());
            }
        }
    }
}

/// One 3-vector column `c` of a column-major matrix with `stride` rows, from row `row`.
#[inline(always)]
fn column3(m: &[Real], stride: usize, row: usize, c: usize) -> Vector3<Real> {
    Vector3::from_column_slice(&m[stride * c + row..stride * c + row + DIM])
}

/// The Coriolis recursion's step from the parent on the link's ancestor columns:
/// `C_v = C_v^p + A·C_w^p + B·J_w^p` and `C_w = C_w^p − W·J_w^p`, `[A, B, W]` being `factors`
/// (`B` the sum of the dense path's three factors on `J_w^p`). `parent` holds the parent's
/// `[C_v, C_w]` (`3 × n` each), `parent_jacobian` its `6 × n` body Jacobian.
pub(crate) fn coriolis_from_parent(
    spans: &[(usize, usize)],
    factors: [&Matrix3<Real>; 3],
    parent: [&[Real]; 2],
    parent_jacobian: &[Real],
    out: [&mut [Real]; 2],
) {
    let [a, b, w] = factors;
    let [out_v, out_w] = out;
    for &(c0, nc) in spans {
        for c in c0..c0 + nc {
            let pw = column3(parent[1], DIM, 0, c);
            let jw = column3(parent_jacobian, SPATIAL_DIM, DIM, c);
            let v = column3(parent[0], DIM, 0, c) + a * pw + b * jw;
            let nw = pw - w * jw;
            out_v[DIM * c..DIM * (c + 1)].copy_from_slice(v.as_slice());
            out_w[DIM * c..DIM * (c + 1)].copy_from_slice(nw.as_slice());
        }
    }
}

/// The Coriolis recursion's last step, from the joint frame to the link's centre of mass:
/// `C_v += A·C_w + B·J_w` on the link's ancestor columns, `[A, B]` being `factors`.
pub(crate) fn coriolis_own_shift(
    spans: &[(usize, usize)],
    factors: [&Matrix3<Real>; 2],
    coriolis_w: &[Real],
    jacobian: &[Real],
    coriolis_v: &mut [Real],
) {
    let [a, b] = factors;
    for &(c0, nc) in spans {
        for c in c0..c0 + nc {
            let add = a * column3(coriolis_w, DIM, 0, c) + b * column3(jacobian, SPATIAL_DIM, DIM, c);
            for (o, x) in coriolis_v[DIM * c..DIM * (c + 1)].iter_mut().zip(add.iter()) {
                *o += *x;
            }
        }
    }
}
