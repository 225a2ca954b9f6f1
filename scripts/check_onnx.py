"""Checks a gait ONNX export with the consumers' own tools: `onnx.checker` (full check, shape
inference included) and onnxruntime, whose actions must match gait's on recorded observations.

usage: check_onnx.py MODEL.onnx CASES.json TOL
CASES.json: {"episodes": [[{"obs": [...], "actions": [...]}, ...], ...]}; an LSTM model's state
starts at zero with each episode and is carried step to step. Prints `max_abs_diff=X steps=N`;
exits 1 when X > TOL.
"""
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort

model_path, cases_path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
onnx.checker.check_model(onnx.load(model_path), full_check=True)
sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
with open(cases_path) as f:
    episodes = json.load(f)["episodes"]
worst, steps = 0.0, 0
for episode in episodes:
    state = None
    if "h_in" in names:
        shape = sess.get_inputs()[names.index("h_in")].shape
        state = (np.zeros(shape, np.float32), np.zeros(shape, np.float32))
    for step in episode:
        feed = {"obs": np.asarray([step["obs"]], np.float32)}
        if state is not None:
            feed["h_in"], feed["c_in"] = state
        out = sess.run(None, feed)
        if state is not None:
            state = (out[1], out[2])
        diff = np.max(np.abs(out[0][0] - np.asarray(step["actions"], np.float32)))
        worst = max(worst, float(diff))
        steps += 1
print(f"max_abs_diff={worst:.3e} steps={steps}")
sys.exit(0 if worst <= tol else 1)
