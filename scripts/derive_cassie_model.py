#!/usr/bin/env python3
"""Derive gait's lumped Cassie description from the lab's MuJoCo model (reference data).

Usage: scripts/derive_cassie_model.py ../shared/reference/cassie-mujoco/cassie_fast.xml

Runs forward kinematics of the XML at the lab's reset pose, merges the MuJoCo bodies into the
6 links per leg that gait simulates (see src/envs/cassie/model.rs), and prints each link's mass,
world-frame COM and inertia (about the COM), joint anchor and axis, and collider geometry, all
at the reset pose, for the LEFT leg and the pelvis. gait derives the right leg by mirroring, so
the simulated robot is exactly left/right symmetric. The printed numbers were pasted into
src/envs/cassie/robot/description.rs; this script is kept so the derivation can be checked and redone.
Pure Python (no numpy) on purpose: it runs anywhere.
"""
import math
import sys
import xml.etree.ElementTree as ET

# The lab's reset qpos (mj_cassiesim.py), left leg part, keyed by joint name.
RESET = {
    "left-hip-roll": 0.0045, "left-hip-yaw": 0.0, "left-hip-pitch": 0.4973,
    "left-achilles-rod": (0.9785, -0.0164, 0.01787, -0.2049),
    "left-knee": -1.1997, "left-shin": 0.0, "left-tarsus": 1.4267, "left-heel-spring": 0.0,
    "left-foot-crank": -1.5244, "left-plantar-rod": 1.5244, "left-foot": -1.5968,
}
LINKS = {  # gait link -> merged MuJoCo bodies (first one carries the joint)
    "hip_roll": ["left-hip-roll"],
    "hip_yaw": ["left-hip-yaw"],
    "thigh": ["left-hip-pitch", "left-achilles-rod"],
    "shin": ["left-knee", "left-knee-spring", "left-shin"],
    "tarsus": ["left-tarsus", "left-heel-spring", "left-foot-crank", "left-plantar-rod"],
    "foot": ["left-foot"],
}


def vec(s):
    return [float(x) for x in s.split()]


def mat_mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def mat_vec(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def normalize(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def xyaxes(s):
    v = vec(s)
    x = normalize(v[:3])
    y = v[3:]
    d = sum(x[i] * y[i] for i in range(3))
    y = normalize([y[i] - d * x[i] for i in range(3)])
    z = cross(x, y)
    return [[x[i], y[i], z[i]] for i in range(3)]  # columns


def axis_angle(axis, angle):
    x, y, z = normalize(axis)
    c, s = math.cos(angle), math.sin(angle)
    t = 1 - c
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def quat_mat(q):
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def euler_zyx_intrinsic(deg):
    a, b, c = [math.radians(x) for x in deg]
    return mat_mul(mat_mul(axis_angle([0, 0, 1], a), axis_angle([0, 1, 0], b)), axis_angle([1, 0, 0], c))


I3 = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]


def walk(body, pos, rot, out):
    """Forward kinematics: fill out[name] = (pos, rot, joint_axis_world, element)."""
    name = body.get("name")
    p = vec(body.get("pos", "0 0 0"))
    wpos = [pos[i] + mat_vec(rot, p)[i] for i in range(3)]
    wrot = mat_mul(rot, xyaxes(body.get("xyaxes"))) if body.get("xyaxes") else rot
    joint = body.find("joint")
    axis = None
    if joint is not None and name in RESET:
        ref = math.radians(float(joint.get("ref", "0")))
        if joint.get("type") == "ball":
            wrot = mat_mul(wrot, quat_mat(RESET[name]))
        else:
            axis = mat_vec(wrot, vec(joint.get("axis", "0 0 1")))
            wrot = mat_mul(wrot, axis_angle(vec(joint.get("axis", "0 0 1")), RESET[name] - ref))
    out[name] = (wpos, wrot, axis, body)
    for child in body.findall("body"):
        walk(child, wpos, wrot, out)


def inertial(body, pos, rot):
    el = body.find("inertial")
    m = float(el.get("mass"))
    c = [pos[i] + mat_vec(rot, vec(el.get("pos")))[i] for i in range(3)]
    xx, yy, zz, xy, xz, yz = vec(el.get("fullinertia"))
    ib = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
    return m, c, mat_mul(mat_mul(rot, ib), transpose(rot))


def lump(parts):
    m = sum(p[0] for p in parts)
    c = [sum(p[0] * p[1][i] for p in parts) / m for i in range(3)]
    inertia = [[0.0] * 3 for _ in range(3)]
    for pm, pc, pi in parts:
        d = [pc[i] - c[i] for i in range(3)]
        dd = sum(x * x for x in d)
        for i in range(3):
            for j in range(3):
                inertia[i][j] += pi[i][j] + pm * ((dd if i == j else 0.0) - d[i] * d[j])
    return m, c, inertia


def fmt(v):
    return "[" + ", ".join(f"{x:.6}" for x in v) + "]"


def main():
    root = ET.parse(sys.argv[1]).getroot()
    pelvis = root.find("worldbody/body")
    out = {}
    walk(pelvis, [0.0, 0.0, 0.0], I3, out)
    m, c, inertia = inertial(pelvis, [0.0, 0.0, 1.01], I3)
    print(f"pelvis mass {m} com {fmt(c)} inertia {[fmt(r) for r in inertia]}")
    for link, bodies in LINKS.items():
        parts = [inertial(out[b][3], out[b][0], out[b][1]) for b in bodies]
        m, c, inertia = lump(parts)
        anchor, _, axis, _ = out[bodies[0]]
        print(f"{link}: mass {m:.6} com {fmt(c)} anchor {fmt(anchor)} axis {fmt(axis)}")
        print(f"    inertia {fmt(inertia[0])} {fmt(inertia[1])} {fmt(inertia[2])}")
        for b in bodies:
            bpos, brot, _, el = out[b]
            for g in el.findall("geom"):
                if g.get("fromto"):
                    f = vec(g.get("fromto"))
                    a = [bpos[i] + mat_vec(brot, f[:3])[i] for i in range(3)]
                    e = [bpos[i] + mat_vec(brot, f[3:])[i] for i in range(3)]
                    print(f"    geom {b} {g.get('type')} r {g.get('size')} from {fmt(a)} to {fmt(e)}")
                else:
                    p = [bpos[i] + mat_vec(brot, vec(g.get('pos', '0 0 0')))[i] for i in range(3)]
                    print(f"    geom {b} {g.get('type')} size {g.get('size')} at {fmt(p)} rot cols {fmt([brot[i][j] for j in range(3) for i in range(3)])}")
            for s in el.findall("site"):
                p = [bpos[i] + mat_vec(brot, vec(s.get('pos')))[i] for i in range(3)]
                r = mat_mul(brot, euler_zyx_intrinsic(vec(s.get("euler")))) if s.get("euler") else brot
                print(f"    site {s.get('name')} at {fmt(p)} rot rows {fmt(r[0])} {fmt(r[1])} {fmt(r[2])}")
    # Loop-closure check: the equality anchors should meet at the reset pose.
    for eq in root.findall("equality/connect"):
        b1, b2 = eq.get("body1"), eq.get("body2")
        if b1 in out:
            p1 = [out[b1][0][i] + mat_vec(out[b1][1], vec(eq.get("anchor")))[i] for i in range(3)]
            print(f"connect {b1}->{b2}: anchor world {fmt(p1)}")


main()
