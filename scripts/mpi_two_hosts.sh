#!/usr/bin/env bash
# Two-host MPI check on one machine: two network namespaces ("hosta", "hostb") joined by a veth
# pair, `mpirun --host hosta,hostb` with an rsh agent that runs `ip netns exec` instead of ssh.
#   1. a short cartpole run over both "hosts" gives the progress.csv of one process;
#   2. hostb's link is taken down mid-run: the job must end by gait's deadline, not hang.
# Needs root (CAP_NET_ADMIN) and a gait built with --features mpi; says so and exits 0 where the
# machine does not allow namespaces.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gait="$root/target/release/gait"
work="$(mktemp -d)"
cleanup() {
  ip netns del hosta 2>/dev/null; ip netns del hostb 2>/dev/null
  sed -i '/# gait-mpi-two-hosts$/d' /etc/hosts 2>/dev/null
  [[ -n "${KEEP:-}" ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
if ! ip netns add hosta 2>/dev/null || ! ip netns add hostb 2>/dev/null; then
  echo "two-host check: skipped, this machine does not allow network namespaces (need root / CAP_NET_ADMIN)"
  exit 0
fi
ip link add veth-a type veth peer name veth-b
ip link set veth-a netns hosta && ip link set veth-b netns hostb
ip -n hosta addr add 10.77.0.1/24 dev veth-a && ip -n hostb addr add 10.77.0.2/24 dev veth-b
for h in hosta hostb; do ip -n $h link set lo up; done
ip -n hosta link set veth-a up && ip -n hostb link set veth-b up
printf '10.77.0.1 hosta # gait-mpi-two-hosts\n10.77.0.2 hostb # gait-mpi-two-hosts\n' >>/etc/hosts
cat >"$work/agent" <<'AGENT'
#!/bin/sh
# mpirun's rsh agent: "agent HOST COMMAND..." runs COMMAND in HOST's namespace.
host="$1"; shift
exec ip netns exec "$host" sh -c "$*"
AGENT
chmod +x "$work/agent"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(ip netns exec hosta mpirun --host hosta,hostb -np 2 --mca plm_rsh_agent "$work/agent"
  --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
  # The launcher's own link check (Open MPI's default is 300 s idle + 9 × 20 s): without it
  # mpirun waits that long for a daemon behind a dead link, after gait has already ended.
  --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3)
args=(train ppo --env cartpole --workers 1 --seed 3 --logdir "$work/logs")

echo "two-host check 1: a run over hosta and hostb"
"${mpi[@]}" "$gait" "${args[@]}" --timesteps 16000 --run-name two >"$work/two.log" 2>&1
rc=$?
"$gait" "${args[@]}" --timesteps 16000 --run-name one >/dev/null 2>&1
if [[ $rc -ne 0 ]] || ! cmp -s "$work"/logs/cartpole/two/*/progress.csv "$work"/logs/cartpole/one/*/progress.csv; then
  echo "FAILED: exit $rc or progress.csv differs"; tail -20 "$work/two.log"; exit 1
fi
python3 -c "import json,glob; print(\"ranks:\", json.load(open(glob.glob(\"$work/logs/cartpole/two/*/experiment.json\")[0]))[\"ranks\"])"
echo "ok: same progress.csv as one process"

echo "two-host check 2: hostb's link goes down mid-run"
start=$(date +%s)
"${mpi[@]}" "$gait" "${args[@]}" --timesteps 1e7 --run-name cut >"$work/cut.log" 2>&1 &
pid=$!
sleep 6
ip -n hostb link set veth-b down
( sleep 40; kill -9 $pid 2>/dev/null ) &
wait $pid
rc=$?
took=$(( $(date +%s) - start - 6 ))
if [[ $rc -eq 0 ]] || [[ $took -gt 30 ]] || ! grep -q "has not answered" "$work/cut.log"; then
  echo "FAILED: exit $rc, ended ${took}s after the cut"; tail -20 "$work/cut.log"; exit 1
fi
grep "has not answered" "$work/cut.log" | head -1
echo "ok: the job ended ${took}s after the link went down (exit $rc)"
