# The two commands of the README. Both set up libtorch first (idempotent, cached per user).
.PHONY: setup build train train-forward train-terrain bench-gym test lint

setup:
	./scripts/setup.sh

build: setup
	cargo build --release

# Main job: train Cassie with its defaults (the env preset; see docs/cassie.md).
train: build
	./target/release/gait train ppo --env cassie

# Forward walking only, the preset before it walked in every direction (docs/cassie.md).
train-forward: build
	./target/release/gait train ppo --config configs/cassie-forward.toml

# Blind walking on rough ground, slopes and stairs (issue 83): the shipped walker continued on
# the terrain mix, in logs/cassie/cassie-terrain. Rerunning continues where it stopped.
train-terrain: build
	./scripts/train_terrain.sh

# Gymnasium's MuJoCo suite (issue 84): Hopper, Walker2d, HalfCheetah, Ant and Humanoid, seeds
# 0-2, 1M steps each, one after another; a table and learning curves in logs/gym-suite
# (docs/benchmarks.md). Rerunning continues where it stopped.
bench-gym: build
	python3 scripts/gym_suite.py logs/gym-suite

# Format and lint checks (the default build and the `mpi` feature's, and the API docs without
# a broken link), then unit + integration
# tests in release mode with `--features mpi`, so the MPI tests run too (clippy reuses the
# release build of torch-sys, and the learning tests run fast); last, the library example,
# which fails unless its own env trains to a return clearly above random.
test: setup
	./scripts/setup_test.sh
	cargo fmt --check
	cargo clippy --release --all-targets -- -D warnings
	cargo clippy --release --all-targets --features mpi -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps
	cargo test --release --features mpi
	cargo run --release --features mpi --example custom_env

lint: setup
	cargo fmt --check
	cargo clippy --release --all-targets -- -D warnings
	cargo clippy --release --all-targets --features mpi -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps
