#!/usr/bin/env python3
"""Reads a run directory's event file with TensorBoard's own EventAccumulator and prints each
scalar tag with its point count and last value. Exits 1 if a reference tag is missing.

    python3 -m venv /tmp/tb && /tmp/tb/bin/pip install tensorboard
    /tmp/tb/bin/python scripts/check_tensorboard.py logs/cartpole/<run>/<timestamp>
"""
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

REQUIRED = [
    "Train/Return", "Train/Episode Length", "Test/Return", "Test/Episode Length",
    "Optimizer/Actor Loss", "Optimizer/Critic Loss", "Optimizer/Mirror Loss", "Optimizer/KL",
    "Time/Sample Time", "Time/Sample Rate", "Time/Optimize Time",
    "Time/Timesteps per Second (FULL)", "Time/Total Timesteps",
]

acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "tensors": 0})
acc.Reload()
tags = acc.Tags()
for tag in sorted(tags["scalars"]):
    events = acc.Scalars(tag)
    print(f"{tag}: {len(events)} points, steps {events[0].step}..{events[-1].step}, last {events[-1].value:g}")
print("text tags:", tags.get("tensors", []))
missing = [t for t in REQUIRED if t not in tags["scalars"]]
if missing:
    print("MISSING:", missing)
    sys.exit(1)
print("ok: all reference tags present")
