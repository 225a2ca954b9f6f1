"""Runs a policy `gait export` wrote on the lab's MuJoCo Cassie model from the exported files
alone: the ONNX model and its sidecar MODEL.onnx.json. No gait code: numpy, onnxruntime and
the `mujoco` wheel. It is the deployer's loop written from `docs/export.md` and the sidecar's
fields, and the test that the sidecar is complete and true: run against the trace `gait eval
--onnx MODEL --sim mujoco --trace TRACE.csv` writes, it starts where that episode started (the
pelvis's yaw from the trace's first pose, the clock phase and command from its first
observation) and reports, step by step, how far its own observations, PD targets and pelvis
pose are from gait's.

usage: python sidecar_mujoco.py MODEL.onnx CASSIE_XML TRACE.csv [STEPS]
prints one JSON object: per-step maxima of |obs - gait's|, |targets - gait's|, pelvis
position distance (m), and the step count compared.
"""

import json
import math
import sys

import mujoco
import numpy as np
import onnxruntime as ort

# The lab's reset pose (roadrunner's mj_cassiesim.py `reset_qpos`): pelvis at 1.01 m, the
# nominal stance with its achilles-rod quaternions, springs at 0. The yaw is the episode's.
RESET_QPOS = np.array([
    0, 0, 1.01, 1, 0, 0, 0,
    0.0045, 0, 0.4973, 0.9785, -0.0164, 0.01787, -0.2049, -1.1997, 0, 1.4267, 0, -1.5244,
    1.5244, -1.5968,
    -0.0045, 0, 0.4973, 0.9786, 0.00386, -0.01524, -0.2051, -1.1997, 0, 1.4267, 0, -1.5244,
    1.5244, -1.5968])


def quat_mul(a, b):
    """Hamilton product of [w, x, y, z] quaternions."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def yaw_of(q):
    w, x, y, z = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def joint_name(entry):
    """`left_hip_roll_pos (rad, encoder)` -> `left-hip-roll`."""
    head = entry.split(" ")[0]
    for suffix in ("_pos", "_vel", "_target_offset"):
        if head.endswith(suffix):
            head = head[: -len(suffix)]
    return head.replace("_", "-")


class Controller:
    """The sidecar's controller: observation, policy, PD targets, and the PD with its delay
    and torque limits, on a MuJoCo model."""

    def __init__(self, model_path, xml):
        self.side = json.load(open(model_path + ".json"))
        ctl = self.side["controller"]
        self.ctl, self.pd, self.ref = ctl, ctl["pd"], ctl["pd"]["reference"]
        self.session = ort.InferenceSession(model_path)
        self.m = mujoco.MjModel.from_xml_path(xml)
        self.d = mujoco.MjData(self.m)
        self.rate = ctl["policy_rate_hz"]
        self.dt = self.m.opt.timestep
        self.substeps = max(1, round(1.0 / self.dt / self.rate))
        jnt = lambda n: mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_JOINT, n)
        self.motors = [jnt(joint_name(a)) for a in ctl["actions"]]
        self.motor_qpos = [self.m.jnt_qposadr[j] for j in self.motors]
        self.motor_dof = [self.m.jnt_dofadr[j] for j in self.motors]
        act = lambda n: mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_ACTUATOR, n)
        self.actuators = [act(joint_name(a)) for a in ctl["actions"]]
        self.gear = np.array([self.m.actuator_gear[a, 0] for a in self.actuators])
        # kd is the joint's own viscous damping (the sidecar's pd_law; MuJoCo's dof_damping).
        for dof, kd in zip(self.motor_dof, self.pd["kd"]):
            self.m.dof_damping[dof] = kd
        self.kp = np.array(self.pd["kp"])
        self.limit = np.array(self.pd["torque_limit"])
        self.no_load = np.array(self.pd["no_load_speed"])
        self.neutral = np.array(self.pd["neutral"])
        self.delay = round(self.pd["torque_delay"] / self.dt)
        self.constants = {c["index"]: c["value"] for c in ctl.get("constant_inputs", [])}
        self.n_obs = len(ctl["observation"])

    def reset(self, yaw, phase_fraction, command):
        mujoco.mj_resetData(self.m, self.d)
        qpos = RESET_QPOS.copy()
        qpos[3:7] = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
        self.d.qpos[:] = qpos
        mujoco.mj_forward(self.m, self.d)
        self.heading = yaw
        self.command = np.array(command, float)
        x = abs(self.command[0])
        self.cycle = self.ref["cycle_time"] - self.ref["cadence"] * min(max(x - 0.5, 0), 1)
        self.phase = phase_fraction * self.cycle
        self.ring = [np.zeros(len(self.motors)) for _ in range(self.delay)]

    def observe(self):
        """The observation, entry by entry as the sidecar names them."""
        d = self.d
        q = d.qpos[3:7]
        h = np.array([math.cos(self.heading / 2), 0, 0, -math.sin(self.heading / 2)])
        rel = quat_mul(h, q)
        if rel[0] < 0:
            rel = -rel
        yaw = yaw_of(q)
        v = d.qvel[0:3]
        own = [math.cos(yaw) * v[0] + math.sin(yaw) * v[1],
               -math.sin(yaw) * v[0] + math.cos(yaw) * v[1], v[2]]
        angle = 2 * math.pi * self.phase / self.cycle
        obs = np.zeros(self.n_obs, np.float32)
        for i, entry in enumerate(self.ctl["observation"]):
            head = entry.split(" ")[0]
            if i in self.constants:
                obs[i] = self.constants[i]
            elif head.startswith("pelvis_quat_"):
                obs[i] = rel["wxyz".index(head[-1])]
            elif head.startswith("pelvis_angvel_"):
                obs[i] = d.qvel[3 + "xyz".index(head[-1])]  # body frame
            elif head.startswith("pelvis_vel_"):
                obs[i] = own[["forward", "lateral", "up"].index(head.split("_")[-1])]
            elif head.startswith("command_"):
                obs[i] = self.command[["x", "y", "turn"].index(head.split("_")[-1])]
            elif head == "clock_sin":
                obs[i] = math.sin(angle)
            elif head == "clock_cos":
                obs[i] = math.cos(angle)
            elif head.endswith("_pos") or head.endswith("_vel"):
                j = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_JOINT, joint_name(entry))
                if head.endswith("_pos"):
                    obs[i] = d.qpos[self.m.jnt_qposadr[j]]
                else:
                    obs[i] = d.qvel[self.m.jnt_dofadr[j]]
            else:
                raise SystemExit(f"sidecar_mujoco: no rule for observation entry '{entry}'")
        return obs

    def targets(self, obs, action):
        """target = action + neutral + reference gait (the sidecar's formulas)."""
        r = self.ref
        x, y, turn = (float(obs[i]) for i in r["command"])
        f = (math.atan2(obs[r["clock"][0]], obs[r["clock"][1]]) / (2 * math.pi)) % 1.0
        s = []
        for table in r["swing_table"]:
            last = len(table) - 1
            xi = min(max(f * last, 0.0), last)
            i = min(int(math.floor(xi)), len(table) - 2)
            w = xi - i
            s.append(table[i] + w * (table[i + 1] - table[i]))
        e = [0.0, 0.0]
        if r.get("velocity") and r["foot_placement"] > 0:
            fwd, lat = r["velocity"]
            e = [obs[fwd] - x, obs[lat] - y]
        asked = max(math.hypot(x, y), abs(turn))
        if r["foot_placement"] > 0:
            asked = max(asked, math.hypot(*e) - r["placement_deadband"])
        g = min(max(asked / r["full_step_speed"], r["min_gain"]), 1.0)
        k = r["foot_placement"]
        offsets = np.zeros(len(action))
        for leg in range(2):
            offsets[r["hip_roll"][leg]] = (r["hip_roll_per_speed"] * y + k * e[1]) * s[leg]
            offsets[r["hip_yaw"][leg]] = r["hip_yaw_per_turn"] * turn * (s[leg] - 0.5)
            offsets[r["hip_pitch"][leg]] = (r["hip_pitch_per_speed"] * x + k * e[0]) * s[leg]
            offsets[r["knee"][leg]] = r["knee_fold"] * g * s[leg]
        return action + self.neutral + offsets

    def step(self, target):
        """One policy step: the PD every substep, its torque delayed, then the clock."""
        d = self.d
        for _ in range(self.substeps):
            q = d.qpos[self.motor_qpos]
            qd = d.qvel[self.motor_dof]
            limit = np.clip(2 * self.limit - 2 * self.limit / self.no_load * np.abs(qd), 0,
                            self.limit)
            tau = np.clip(self.kp * (target - q), -limit, limit)
            if self.delay:
                self.ring.append(tau)
                tau = self.ring.pop(0)
            d.ctrl[self.actuators] = tau / self.gear
            mujoco.mj_step(self.m, d)
        self.heading += self.command[2] / self.rate
        self.phase += 1.0 / self.rate
        if self.phase > self.cycle:
            self.phase -= self.cycle


def main():
    model_path, xml, trace_path = sys.argv[1:4]
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else None
    trace = np.genfromtxt(trace_path, delimiter=",", names=True)
    trace = trace[trace["episode"] == 0]
    c = Controller(model_path, xml)
    n = c.n_obs
    obs_cols = [f"obs_{i}" for i in range(n)]
    act_cols = [f"action_{i}" for i in range(len(c.motors))]
    row0 = trace[0]
    qx, qy, qz, qw = (row0[k] for k in ("base_qx", "base_qy", "base_qz", "base_qw"))
    ref = c.ref
    frac = (math.atan2(row0[obs_cols[ref["clock"][0]]], row0[obs_cols[ref["clock"][1]]])
            / (2 * math.pi)) % 1.0
    command = [row0[obs_cols[i]] for i in ref["command"]]
    c.reset(yaw_of([qw, qx, qy, qz]), frac, command)
    steps = min(steps or len(trace), len(trace))
    worst = {"obs": [], "targets": [], "position": []}
    for t in range(steps):
        row = trace[t]
        obs = c.observe()
        gait_obs = np.array([row[k] for k in obs_cols])
        position = c.d.qpos[0:3]
        gait_position = np.array([row["base_x"], row["base_y"], row["base_z"]])
        action = c.session.run(None, {"obs": obs[None, :]})[0][0].astype(np.float64)
        target = c.targets(obs, action)
        gait_target = np.array([row[k] for k in act_cols])
        worst["obs"].append(float(np.max(np.abs(obs - gait_obs))))
        worst["targets"].append(float(np.max(np.abs(target - gait_target))))
        worst["position"].append(float(np.linalg.norm(position - gait_position)))
        c.step(target)
    print(json.dumps({"steps": steps, **worst}))


if __name__ == "__main__":
    main()
