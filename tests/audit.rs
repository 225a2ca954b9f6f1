//! The second and third hostile-input audits (`shared/reference/audit-2026-11-24.md`, and
//! `audit-2026-12-04.md` for the rows named `R3-*`, as they are fixed), every case a row:
//! its reproduction run through `sh`, the documented exit code (0 done, 1 runtime, 2 usage,
//! 130 interrupted), one line on stderr for errors, and what must still be on disk. Device
//! nodes and links are made inside a temp dir, never the machine's own; `2>/dev/full` only
//! redirects into the machine's full device, which writes nothing to it.

mod common;

use std::path::Path;
use std::process::Command;

use common::{snapshot, trained_cartpole};

/// One case: the audit's id, a shell script (`$G` gait, `$T` a temp dir, `$RUN` a trained
/// cartpole run, `$W` the shipped walking policy, `$E` an eval prefix), the exit code, a text
/// stderr must contain, and a shell test that must hold afterwards.
struct Case {
    id: &'static str,
    script: &'static str,
    code: i32,
    stderr_has: &'static str,
    after: &'static str,
}

const fn case(id: &'static str, script: &'static str, code: i32, stderr_has: &'static str) -> Case {
    Case { id, script, code, stderr_has, after: "true" }
}

const fn case_then(
    id: &'static str,
    script: &'static str,
    code: i32,
    stderr_has: &'static str,
    after: &'static str,
) -> Case {
    Case { id, script, code, stderr_has, after }
}

const CASES: &[Case] = &[
    // A. Outputs never replace special files.
    case_then("A1", "mknod $T/full.gif c 1 7 && $E --gif $T/full.gif", 2, "is not a regular file", "test -c $T/full.gif"),
    case_then("A2", "mknod $T/null.html c 1 3 && $E --record $T/null.html", 2, "is not a regular file", "test -c $T/null.html"),
    case_then("A3", "mknod $T/full.png c 1 7 && $G plot $RUN --out $T/full.png", 2, "is not a regular file", "test -c $T/full.png"),
    case_then("A4", "ln -s /proc/self/fd/1 $T/stdout.gif && $E --gif $T/stdout.gif > $T/captured", 2, "symbolic link", "test -L $T/stdout.gif"),
    // B. A typo destroys nothing.
    case_then("B1", "cp -r $W $T/run && $E --gif $T/run/actor.safetensors", 2, "ending in .gif", "cmp $W/actor.safetensors $T/run/actor.safetensors"),
    case_then("B2", "$E --gif $T/x.gif --record $T/x.gif", 2, "--record", "test ! -e $T/x.gif"),
    // C. No panics.
    case("C1", "$G train ppo --env cartpole --timesteps 8000 --logdir $T/l --clip 1e39", 2, "--clip"),
    case_then("C2", "printf '[ppo]\\nkl = 1e308\\nclip = 1e308\\n' > $T/c.toml && $G train ppo --config $T/c.toml --logdir $T/l --timesteps 4000", 2, "--clip", "test ! -e $T/l"),
    case("C3", "$G bench env --env cartpole --seconds inf", 2, "--seconds"),
    case("C4", "$G bench env --env cartpole --seconds 1e20", 2, "--seconds"),
    case("C5", "$G bench optimize --arch lstm --layers 16,8", 2, "equal --layers"),
    case("C6", "$G bench optimize --layers 100000,100000", 2, "GB of memory available"),
    case("C7", "$G train ppo --env walker 2>/dev/full", 2, ""),
    case("C8", "$G eval --path nope 2>/dev/full", 2, ""),
    case("C9", "$G train ppo --previous nope 2>/dev/full", 2, ""),
    // D. No hangs, no unbounded memory.
    case("D1", "cp -r $RUN $T/big && python3 -c \"import csv,sys; p=sys.argv[1]; r=list(csv.reader(open(p))); i=r[0].index('Train/Return'); [row.__setitem__(i, '1e308' if k % 2 == 0 else '-1e308') for k, row in enumerate(r[1:])]; csv.writer(open(p,'w',newline='')).writerows(r)\" $T/big/progress.csv && timeout 60 $G plot $T/big --out $T/big.png", 0, ""),
    case("D2", "$G train ppo --config /dev/zero", 2, "larger than"),
    case("D3", "cp -r $RUN $T/run && ln -sf /dev/zero $T/run/progress.csv && $G plot $T/run --out $T/o.png", 1, "larger than"),
    case("D4", "$G eval --path $W --command 1,0,0 --episodes 1e9 --record $T/r.html", 2, "--record: 1000000000 episodes"),
    case_then("D5", "$G train ppo --env cartpole --num-steps 1e15 --timesteps 1e16 --logdir $T/l", 2, "--num-steps", "test ! -e $T/l"),
    // E. Signals reach every place time is spent (E1-E4 are in `signals_*` below).
    case("E5", "$G train ppo --env cassie --policy-rate 1e-300 --timesteps 4000 --logdir $T/l", 2, "--policy-rate"),
    case("E6", "$G bench env --env cassie --policy-rate 1e-300 --seconds 1", 2, "--policy-rate"),
    // F. Exit codes.
    case("F1", "$G train ppo --print-config > /dev/full", 1, "--print-config"),
    // Rust's runtime reopens a closed stdout on /dev/null before `main`, so `>&-` is
    // `> /dev/null`: the config is discarded as asked, and nothing is left half-written.
    case("F2", "$G train ppo --print-config >&-", 0, ""),
    case("F3", "$G eval --path $W --traj-len 50 --episodes 3 | head -1 > /dev/null; exit ${PIPESTATUS[0]}", 0, ""),
    case_then("F4", "$G eval --path $W --command 1,0,0 --traj-len 60 --episodes 3 --gif $T/w.gif | head -1 > /dev/null; exit ${PIPESTATUS[0]}", 0, "", "test -s $T/w.gif"),
    case_then("F5", "$G train ppo --previous $W --logdir $T/l --timesteps 4000 --num-steps 1000", 2, "nothing to do", "test ! -e $T/l"),
    case("F6", "$G bench env --env walker", 2, "unknown env"),
    case_then("F7", "$G train ppo --env cartpole --timesteps 4000 --logdir $T/l --run-name $(printf 'a%.0s' $(seq 300))", 2, "--run-name", "test ! -e $T/l"),
    // G. Range checks everywhere a value enters.
    case("G1", "$G bench env --env cartpole --seconds 0", 2, "--seconds"),
    case("G2", "$G bench env --env cartpole --seconds=-1", 2, "--seconds"),
    case("G3", "$G bench env --env cartpole --seconds nan", 2, "--seconds"),
    case("G4", "$G bench env --env cartpole --seconds=-inf", 2, "--seconds"),
    case("G5", "$G bench optimize --batch-size 1e9 --layers 8,8", 2, "--batch-size"),
    case("G6", "$G bench optimize --mirror nan --layers 8,8", 2, "--mirror"),
    case("G7", "$G bench optimize --mirror=-1 --layers 8,8", 2, "--mirror"),
    case("G8", "$G bench optimize --mirror inf --layers 8,8", 2, "--mirror"),
    case_then("G9", "printf '[run]\\nlogdir = \"\"\\ntimesteps = 4000\\n' > $T/c.toml && cd $T && $G train ppo --config c.toml", 2, "--logdir", "test ! -e $T/cartpole"),
    case("G10", "$G train ppo --env cartpole --timesteps 8000 --logdir $T/l --std 1e39", 2, "--std"),
    case("G11", "$G train ppo --env cartpole --timesteps 8000 --logdir $T/l --entropy-coeff 1e39", 2, "--entropy-coeff"),
    case_then("G12", "$G train ppo --env cartpole --timesteps 4000 --logdir $T/l --run-name $'a\\nb'", 2, "--run-name", "test ! -e $T/l"),
    // H. One clear line.
    case("H1", "printf '[ppo\\nkl = 0.01\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "line 1, column 5: unclosed table"),
    case("H2", "printf '[sampler]\\ntraj_len = 9223372036854775808\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "line 2"),
    case("H3", "printf '[ppo]\\nkl = 0.01\\nkl = 0.02\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "line 3, column 1: duplicate key"),
    case("H4", "python3 -c \"print('x = ' + '['*100000 + ']'*100000)\" > $T/c.toml && $G train ppo --config $T/c.toml", 2, "TOML"),
    case("H5", "python3 -c \"print('x = ' + '{a = '*20000 + '1' + '}'*20000)\" > $T/c.toml && $G train ppo --config $T/c.toml", 2, "TOML"),
    case("H6", "python3 -c \"print('[ppo]\\nkl = 0.01 ' + 'x'*50000000)\" > $T/c.toml && $G train ppo --config $T/c.toml", 2, "TOML: line 2"),
    case("H7", "printf '[ppo]\\nkl = nan\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "ppo.kl: NaN is not a finite number"),
    case("H8", "printf '[ppo]\\na_lr = inf\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "ppo.a_lr: inf is not a finite number"),
    case("H9", "printf '[ppo]\\ndiscount = -inf\\n' > $T/c.toml && $G train ppo --config $T/c.toml", 2, "ppo.discount: -inf is not a finite number"),
    case("H10", "$E --gif /proc/w.gif", 2, "--gif /proc/w.gif: cannot be written there"),
    case("H11", "$E --record /proc/r.html", 2, "--record /proc/r.html: cannot be written there"),
    // H12, H13, H20: a full disk, a 200 KB tmpfs in a private mount namespace (as root).
    case_then("H12", "mkdir $T/s && unshare -m sh -c \"mount -t tmpfs -o size=200k tmpfs $T/s && head -c 150000 /dev/zero > $T/s/fill && $G eval --path $W --command 1,0,0 --traj-len 200 --episodes 1 --gif $T/s/w.gif > /dev/null; r=\\$?; ls -A $T/s > $T/left; exit \\$r\"", 1, "w.gif: No space left on device (os error 28)", "test \"$(cat $T/left)\" = fill"),
    case_then("H13", "mkdir $T/s && unshare -m sh -c \"mount -t tmpfs -o size=200k tmpfs $T/s && head -c 150000 /dev/zero > $T/s/fill && $G eval --path $W --command 1,0,0 --traj-len 200 --episodes 1 --record $T/s/w.html > /dev/null; r=\\$?; ls -A $T/s > $T/left; exit \\$r\"", 1, "w.html: No space left on device (os error 28)", "test \"$(cat $T/left)\" = fill"),
    case_then("H20", "mkdir $T/s && unshare -m sh -c \"mount -t tmpfs -o size=200k tmpfs $T/s && head -c 150000 /dev/zero > $T/s/fill && $G plot $RUN --out $T/s/p.png; r=\\$?; ls -A $T/s > $T/left; exit \\$r\"", 1, "p.png: No space left on device (os error 28)", "test \"$(cat $T/left)\" = fill"),
    case("H14", "$G plot $RUN --out $T/curves", 2, "ending in .png"),
    case("H15", "$G plot $RUN --out $T/curves.svg", 2, "ending in .png"),
    case_then("H16", "mknod $T/full c 1 7 && $G plot $RUN --out $T/full", 2, "ending in .png", "test -c $T/full"),
    case_then("H17", "cp -r $RUN $T/run && $G plot $T/run --out $T/run/progress.csv", 2, "ending in .png", "cmp $RUN/progress.csv $T/run/progress.csv"),
    case("H18", "$G plot $RUN --out $T/no/such/o.png", 2, "existing directory"),
    case("H19", "$G plot $RUN --out /proc/o.png", 2, "cannot be written there"),
    // Round 3, C14-C15 and H4: libtorch's thread count is an i32, and far past the cores
    // threads only switch.
    case_then("R3-C16", "mkdir $T/t && unshare -m sh -c \"mount -t tmpfs -o size=300k tmpfs $T/t && $G export --path $W --format torchscript --out $T/t/w.pt; r=\\$?; ls -A $T/t > $T/left; exit \\$r\"", 1, "No space left on device (os error 28)", "test ! -s $T/left"),
    case_then("R3-C14", "$G train ppo --env cartpole --timesteps 4000 --logdir $T/l --backprop-workers 2147483648", 2, "[1, 1024]", "test ! -e $T/l"),
    case_then("R3-C15", "$G train ppo --env cartpole --timesteps 4000 --logdir $T/l --backprop-workers 100000", 2, "[1, 1024]", "test ! -e $T/l"),
    case_then("R3-H4", "$G train ppo --env cartpole --timesteps 4000 --logdir $T/l --backprop-workers 4294967297", 2, "[1, 1024]", "test ! -e $T/l"),
    // Round 3, G: the lab's MuJoCo model blows up from 6 ms, so no timestep above 5 ms enters.
    case("R3-G1", "$E --sim mujoco --sim-dt 0.01", 2, "stable up to 0.005 s"),
    case("R3-G2", "$E --sim mujoco --sim-dt 0.006", 2, "stable up to 0.005 s"),
    case_then("R3-G3", "$G train ppo --env cassie --sim mujoco --sim-dt 0.01 --timesteps 2000 --logdir $T/l", 2, "--sim-dt 0.01", "test ! -e $T/l"),
    case_then("R3-G3b", "$G train ppo --env cassie --sim rapier+mujoco@0.006 --timesteps 2000 --logdir $T/l", 2, "--sim rapier+mujoco@0.006: MuJoCo", "test ! -e $T/l"),
    case("R3-G4", "$E --sim mujoco --sim-dt 0.01 --push 5 --push-exact --record $T/r.html", 2, "stable up to 0.005 s"),
    // Round 3, G5: an episode the simulation's blow-up cut is said to be one and stays out of
    // the means (violent actions at the largest timestep blow the model up).
    case("R3-G5", "$G eval --path $W --sim mujoco --sim-dt 0.005 --action-noise 5 --episodes 4 --traj-len 200 >&2", 0, "episodes were cut by the simulation blowing up (a non-finite state the simulator reset): left out of the means above"),
    // Round 3, D: a run file edited by hand gets the range checks of flags and files.
    case("R3-D2", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['config']['env']['cassie']['policy_rate']=1e-300; json.dump(d,open(p,'w'))\" $T/run/experiment.json && timeout 60 $G eval --path $T/run --command 1,0,0 --traj-len 10 --episodes 1", 1, "holds a value this gait refuses (--policy-rate"),
    case_then("R3-D3", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['config']['env']['cassie']['policy_rate']=1e-300; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G export --path $T/run --out $T/x.onnx", 1, "--policy-rate", "test ! -e $T/x.onnx"),
    case("R3-D5", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); c=d['config']['env']['cassie']; c['sim_dt']=1.0; c['sim']='rapier'; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G eval --path $T/run --command 1,0,0 --traj-len 30 --episodes 1", 1, "--sim-dt"),
    case("R3-D7", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['config']['env']['cassie']['friction']=0; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G check --path $T/run --sims rapier --command 0,0,0 --episodes 1 --traj-len 30", 1, "--friction"),
    case("R3-D9", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['config']['sampler']['traj_len']=0; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G eval --path $T/run --command 1,0,0 --episodes 1", 1, "--traj-len"),
    // Round 3, C and D through a sidecar: `eval --onnx` refuses one it cannot run, in one line.
    case("R3-D1", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['env_config']['cassie']['policy_rate']=1e-300; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "--policy-rate 1e-300: not a policy rate"),
    case("R3-D4", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); c=d['env_config']['cassie']; c['sim']='rapier'; c['sim_dt']=1.0; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "--sim-dt"),
    case("R3-D6", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['env_config']['cassie']['friction']=0; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "--friction"),
    case("R3-D8", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['episode_length']=0; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "episode_length 0"),
    case("R3-D10", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['neutral']=[0.0]*50000; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "pd.neutral has 50000 values"),
    case("R3-C1", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['neutral']=[0.0]*2; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "pd.neutral has 2 values"),
    case("R3-C2", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['swing_table']=[[0.0],[0.0]]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "swing_table"),
    case("R3-C3", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['swing_table']=[[0.5],[0.5]]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "swing_table"),
    case("R3-C5", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['hip_pitch']=[999,2]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "indexes past the 10 actions"),
    case("R3-C6", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['clock']=[999,0]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "indexes past the 47 inputs"),
    case("R3-C8", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['min_gain']=2; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "min_gain 2 is not in [0, 1]"),
    case("R3-C10", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['net']['arch']='lstm'; d['net']['layers']=[]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "without hidden layers"),
    case("R3-C4", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['command']=[99,0,0]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "indexes past the 47 inputs"),
    case("R3-C7", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['hip_pitch']=[2,99]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "indexes past the 10 actions"),
    case("R3-C9", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['reference']['min_gain']=1e39; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "min_gain"),
    case("R3-C11", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['net']['layers']=[]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && timeout 60 $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "without hidden layers"),
    case("R3-C12", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['net']['layers']=[100000,100000]; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G eval --path $T/run --command 1,0,0 --traj-len 10 --episodes 1", 2, "GB of memory available"),
    case_then("R3-C13", "cp -r $W $T/run && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['net']['layers']=[100000,100000]; json.dump(d,open(p,'w'))\" $T/run/experiment.json && $G export --path $T/run --out $T/x.onnx", 2, "GB of memory available", "test ! -e $T/x.onnx"),
    // Round 3, A: a link planted at a temp name is never written through, and two exports
    // racing to one --out leave one whole pair.
    case_then("R3-A1", "echo precious > $T/victim && python3 -c \"import os;l=int(open('/proc/loadavg').read().split()[4]);[os.symlink('$T/victim',f'$T/.x.gif.{p}.tmp.gif') for p in range(l+1,l+400)]\" && $E --gif $T/x.gif", 0, "", "test \"$(cat $T/victim)\" = precious && test -s $T/x.gif"),
    case_then("R3-A2", "echo precious > $T/victim && python3 -c \"import os;l=int(open('/proc/loadavg').read().split()[4]);[os.symlink('$T/victim',f'$T/.x.onnx.{p}.tmp.onnx') for p in range(l+1,l+400)]\" && $G export --path $W --out $T/x.onnx", 0, "", "test \"$(cat $T/victim)\" = precious && test -s $T/x.onnx"),
    case_then("R3-A3", "$G export --path ${W%/*}/cassie-forward --out $T/x.onnx > /dev/null && for d in 0.1 0.15 0.2 0.25 0.3; do $G export --path $W --out $T/x.onnx --force > /dev/null 2>&1 & P=$!; sleep $d; kill -TERM $P 2>/dev/null; wait $P; r=$?; case $r in 0|130|143) ;; *) exit 1;; esac; $G eval --onnx $T/x.onnx --command 1,0,0 --episodes 1 --traj-len 5 > /dev/null || exit 1; done", 0, "", "test $(ls -A $T | grep -c tmp) = 0"),
    case_then("R3-A4", "for i in 1 2 3; do $G export --path $W --out $T/x$i.onnx > /dev/null 2>&1 & $G export --path $W --out $T/x$i.onnx --latest > /dev/null 2>&1 & wait; $G eval --onnx $T/x$i.onnx --command 1,0,0 --episodes 1 --traj-len 5 > /dev/null || exit 1; done", 0, "", "test $(ls -A $T | grep -c tmp) = 0"),
    // Round 3, B1-B3: what a killed writer left is removed by the next write of that file.
    case_then("R3-B1", "echo x > $T/.g.gif.4194305.tmp.gif && echo y > $T/.g.gif.4194306-0f.tmp.gif && $E --gif $T/g.gif", 0, "", "test -s $T/g.gif && test $(ls -A $T | grep -c tmp) = 0"),
    case_then("R3-B3", "echo x > $T/.x.onnx.4194305.tmp.onnx && $G export --path $W --out $T/x.onnx", 0, "", "test -s $T/x.onnx && test $(ls -A $T | grep -c tmp) = 0"),
    // Round 3, B4: a refused --previous removes nothing, even files named like temp files.
    case_then("R3-B4", "cp -r $RUN $T/run && echo mine > $T/run/.notes.31999.tmp && $G train ppo --previous $T/run --previous-iteration 99 --logdir $T/l", 2, "--previous-iteration 99", "test -e $T/run/.notes.31999.tmp"),
    // Round 3, E1-E3: an exported model runs only beside the sidecar exported with it.
    case("R3-E1", "$G export --path $W --out $T/w.onnx > /dev/null && $G export --path $W --out $T/o.onnx --latest > /dev/null && cp $T/o.onnx.json $T/w.onnx.json && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "not the one exported with it"),
    case("R3-E2", "$G export --path $W --out $T/w.onnx > /dev/null && $G export --path $W --out $T/o.onnx --latest > /dev/null && cp $T/o.onnx $T/w.onnx && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "not the one exported with it"),
    case("R3-E3", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['config_sha256']='0000'; json.dump(d,open(p,'w'))\" $T/w.onnx.json && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "not the one exported with it"),
    // Round 3, E4-E5: the sidecar's PD section is the deployer's to tune: a gain past any
    // robot's is refused, an edited gain is driven with and said so.
    case("R3-E4", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['kp']=[k*1000 for k in d['controller']['pd']['kp']]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "pd.kp holds 110000, not in [0, 100000]"),
    case_then("R3-E5", "$G export --path $W --out $T/w.onnx > /dev/null && python3 -c \"import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['controller']['pd']['kp']=[k/2 for k in d['controller']['pd']['kp']]; json.dump(d,open(p,'w'))\" $T/w.onnx.json && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10 > $T/out", 0, "", "grep -q \"driving with the sidecar's (kp)\" $T/out"),
    case("R3-J4", "$G export --path $W --out $T/w.onnx > /dev/null && ${GAIT_CACHE:-$HOME/.cache/gait}/onnx-1.32.0/bin/python -c \"import onnx,numpy as np;from onnx import helper as h,TensorProto as T,numpy_helper as n;g=h.make_graph([h.make_node('MatMul',['obs','W'],['mm']),h.make_node('Add',['mm','B'],['actions'])],'f',[h.make_tensor_value_info('obs',T.FLOAT,['batch',5])],[h.make_tensor_value_info('actions',T.FLOAT,['batch',10])],[n.from_array(np.zeros((5,10),np.float32),'W'),n.from_array(np.zeros(10,np.float32),'B')]);m=h.make_model(g,opset_imports=[h.make_opsetid('',17)]);m.ir_version=8;onnx.save(m,'$T/w.onnx')\" && $G eval --onnx $T/w.onnx --command 1,0,0 --episodes 1 --traj-len 10", 2, "not a model `gait export` wrote"),
    // Round 3, J: messages that say what is wrong, readably.
    case("R3-J2", "printf '[run]\\nenv = \"cassie\"\\n[env.cassie]\\npolicy_rate = 1e-300\\n' > $T/c.toml && $G train ppo --config $T/c.toml --print-config", 2, "--policy-rate 1e-300: not a policy rate"),
    case("R3-J6", "$G train ppo --env cartpole --print-config --save-freq 1e3 | grep -q 'save_freq = 1000'", 0, ""),
    case("R3-J7", "$G train ppo --env cartpole --print-config --traj-len 18446744073709551615", 2, "below 9.2e18"),
    case("R3-J1", "cp -r $RUN $T/run && ln -sf /dev/zero $T/run/actor_1.safetensors && $G eval --path $T/run --iteration 1", 2, "actor_1.safetensors is not a regular file"),
    case("R3-J3", "$G eval --path $W --episodes 1 --traj-len 10 --course $(for i in $(seq 23862); do printf '3600:0,0,0 '; done)", 2, "add up to more than 4294967295 policy steps"),
    case_then("R3-J5", "mknod $T/full c 1 7 && $G export --path $W --out $T/x.onnx > $T/full", 0, "", "test -s $T/x.onnx && test -s $T/x.onnx.json"),
    // Round 3, J8: a second Ctrl-C in `eval` (here during the GIF of a finished episode) says
    // what it loses in eval's words, not training's.
    case("R3-J8", "$G eval --path $W --command 1,0,0 --episodes 3 --traj-len 1000 --gif $T/g.gif > $T/out 2> $T/err & P=$!; for i in $(seq 600); do grep -q 'episode   0' $T/out && break; sleep 0.1; done; kill -INT $P; sleep 0.3; kill -INT $P; wait $P; test $? = 130 && tail -n 1 $T/err | grep -qx 'second interrupt: exiting without waiting (the episodes that ran are not reported)' && test ! -e $T/g.gif", 0, ""),
    // Round 3, H1-H3: every whole number a flag takes, the run's own config.toml holds.
    case("R3-H1", "$G train ppo --env cartpole --seed 18446744073709551615 --print-config", 2, "--seed"),
    case("R3-H2", "$G train ppo --env cartpole --timesteps 9.5e18 --print-config", 2, "--timesteps"),
    case("R3-H3", "printf '[run]\\nseed = 18446744073709551615\\n' > $T/c.toml && $G train ppo --config $T/c.toml --print-config", 2, "TOML integers are 64-bit signed"),
    case("R3-H1b", "$G train ppo --env cartpole --seed 9223372036854775807 --print-config > $T/c.toml && $G train ppo --config $T/c.toml --print-config | grep -q 'seed = 9223372036854775807'", 0, ""),
];

#[test]
fn every_audit_case_ends_cleanly() {
    let base = tempfile::tempdir().unwrap();
    let run = trained_cartpole(base.path(), "cp", &["--timesteps", "12000", "--save-freq", "1"]);
    let walk = common::pretrained_walk();
    let before = snapshot(&walk);
    let mut failures = Vec::new();
    for c in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let eval = format!(
            "{} eval --path {} --command 1,0,0 --traj-len 60 --episodes 1",
            env!("CARGO_BIN_EXE_gait"),
            walk.display()
        );
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("{}\n", c.script))
            .env("G", env!("CARGO_BIN_EXE_gait"))
            .env("T", tmp.path())
            .env("RUN", &run)
            .env("W", &walk)
            .env("E", &eval)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let mut problems = Vec::new();
        if o.status.code() != Some(c.code) {
            problems.push(format!("exit {:?}, expected {}", o.status.code(), c.code));
        }
        if !err.contains(c.stderr_has) {
            problems.push(format!("stderr lacks {:?}", c.stderr_has));
        }
        let error_lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        let one_line = error_lines.len() == 1 && err.len() <= 2000;
        if c.code != 0 && !c.script.contains("2>/dev/full") && !one_line {
            problems.push(format!("not one short error line ({} bytes)", err.len()));
        }
        if err.contains("panicked") {
            problems.push("panicked".into());
        }
        let after = Command::new("bash")
            .arg("-c")
            .arg(c.after)
            .env("T", tmp.path())
            .env("RUN", &run)
            .env("W", &walk)
            .status()
            .unwrap();
        if !after.success() {
            problems.push(format!("afterwards `{}` does not hold", c.after));
        }
        if !problems.is_empty() {
            let shown: String = err.chars().take(300).collect();
            failures.push(format!("{}: {} (stderr: {shown})", c.id, problems.join("; ")));
        }
    }
    assert_eq!(snapshot(&walk), before, "a case changed pretrained/cassie-walk");
    assert!(
        failures.is_empty(),
        "{} of {} cases unclean:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Sends `signal` to a `gait train` started with `args` once `ready` appears on its stdout or
/// after `wait_s`, and returns (exit code, seconds from the signal to the exit, stdout).
fn signalled(args: &[&str], logdir: &Path, signal: i32, wait_s: f64) -> (Option<i32>, f64, String) {
    let logdir = ["--logdir", logdir.to_str().unwrap()];
    signalled_cmd(&[args, &logdir[..]].concat(), signal, wait_s)
}

/// [`signalled`] for any gait command line.
fn signalled_cmd(args: &[&str], signal: i32, wait_s: f64) -> (Option<i32>, f64, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_gait"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs_f64(wait_s));
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(child.id() as i32, signal) };
    let sent = std::time::Instant::now();
    let deadline = sent + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    (status.and_then(|s| s.code()), sent.elapsed().as_secs_f64(), out)
}

/// E1-E2: one SIGINT or SIGTERM during a long prenormalization ends the process with 130
/// within seconds, nothing written. E3: a stop inside the first iteration says so plainly (no
/// "iteration -1", no --previous that would fail) and leaves no empty run dir.
#[test]
fn signals_end_prenormalization_and_the_first_iteration_cleanly() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "train",
            "ppo",
            "--env",
            "cartpole",
            "--prenorm",
            "--prenormalize-steps",
            "9e18",
            "--timesteps",
            "8000",
        ];
        let (code, secs, _) = signalled(&args, dir.path(), signal, 3.0);
        assert_eq!(code, Some(130), "signal {signal}");
        assert!(secs < 5.0, "signal {signal}: {secs} s to stop");
        assert!(!dir.path().join("cartpole").exists(), "nothing written");
    }
    // E4: an episode that never ends (pendulum, --traj-len 9e18) stops on the first signal.
    let dir = tempfile::tempdir().unwrap();
    let args = ["train", "ppo", "--env", "pendulum", "--traj-len", "9e18", "--num-steps", "1000"];
    let (code, secs, out) = signalled(&args, dir.path(), libc::SIGINT, 3.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(secs < 5.0, "{secs} s to stop");
    assert!(!out.contains("iteration -1"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "train",
        "ppo",
        "--env",
        "cassie",
        "--timesteps",
        "400000",
        "--num-steps",
        "200000",
        "--prenormalize-steps",
        "100",
    ];
    let (code, _, out) = signalled(&args, dir.path(), libc::SIGINT, 3.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(!out.contains("iteration -1") && !out.contains("--previous"), "{out}");
    assert!(out.contains("before the first iteration completed: nothing was saved"), "{out}");
    let runs = dir.path().join("cassie");
    let left: Vec<_> = walkdir(&runs);
    assert!(left.iter().all(|p| p.is_dir()), "files left behind: {left:?}");
}

/// Round 3, F1: a continuation stopped before its first iteration removes its own dir and
/// suggests continuing the run it continued (the command that works); F2: a Ctrl-C during the
/// final evaluation exits 130 as interrupted, not failed, and says every iteration is saved.
#[test]
fn interrupted_continuations_and_final_evaluations_report_what_is_saved() {
    let base = tempfile::tempdir().unwrap();
    let run = trained_cartpole(base.path(), "f1", &["--timesteps", "4000"]);
    let dir = tempfile::tempdir().unwrap();
    let prev = run.to_str().unwrap();
    let args = ["train", "ppo", "--previous", prev, "--timesteps", "1e9", "--num-steps", "1e8"];
    let (code, _, out) = signalled(&args, dir.path(), libc::SIGINT, 3.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(out.contains("before the first iteration completed: nothing was saved"), "{out}");
    assert!(out.contains(&format!("--previous {prev}")), "{out}");
    assert!(walkdir(&dir.path().join("cartpole")).iter().all(|p| p.is_dir()), "left: {out}");
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "train",
        "ppo",
        "--env",
        "cartpole",
        "--timesteps",
        "2000",
        "--num-steps",
        "2000",
        "--num-eval-eps",
        "2e7",
        "--eval-freq",
        "100000",
        "--run-name",
        "fe",
    ];
    let (code, _, out) = signalled(&args, dir.path(), libc::SIGINT, 4.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(
        out.contains("interrupted during the final evaluation") && out.contains("saved"),
        "{out}"
    );
    let runs: Vec<_> =
        std::fs::read_dir(dir.path().join("cartpole/fe")).unwrap().flatten().collect();
    let summary = std::fs::read_to_string(runs[0].path().join("summary.json")).unwrap();
    assert!(summary.contains("\"interrupted\""), "{summary}");
    assert!(runs[0].path().join("resume.safetensors").is_file());
}

/// D4: Ctrl-C during `eval --record` of many episodes ends it with 130 and writes the page of
/// the episodes that ran (it used to discard everything).
#[test]
fn a_stopped_recording_keeps_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let walk = common::pretrained_walk();
    let args = [
        "eval",
        "--path",
        walk.to_str().unwrap(),
        "--command",
        "1,0,0",
        "--episodes",
        "1000",
        "--record",
        page.to_str().unwrap(),
    ];
    let (code, secs, out) = signalled_cmd(&args, libc::SIGINT, 4.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(secs < 10.0, "{secs} s to stop");
    assert!(out.contains("interrupted after") && out.contains("wrote"), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    let replay = gait::replay::from_page(&html).unwrap();
    assert!(
        !replay.episodes.is_empty() && replay.episodes.len() < 1000,
        "{}",
        replay.episodes.len()
    );
}

/// Ctrl-C during a long `gait check` ends it with 130, the table holding the cells that
/// completed (in order) and the summary of those.
#[test]
fn a_stopped_check_reports_the_cells_that_completed() {
    let walk = common::pretrained_walk();
    let mut args = vec!["check", "--path", walk.to_str().unwrap(), "--sims", "rapier"];
    args.extend(["--episodes", "1", "--traj-len", "100"]);
    for _ in 0..2000 {
        args.extend(["--command", "0.5,0,0"]);
    }
    let (code, secs, out) = signalled_cmd(&args, libc::SIGINT, 4.0);
    assert_eq!(code, Some(130), "{out}");
    assert!(secs < 10.0, "{secs} s to stop");
    let rows = out.lines().filter(|l| l.starts_with("rapier  0.5,0,0 ")).count();
    assert!(rows > 0 && rows < 2000, "{rows} rows:\n{out}");
    assert!(out.contains("\nwithin: ") && out.contains(&format!(" of {rows} cells; ")), "{out}");
    assert!(
        out.ends_with("interrupted: the table holds the evaluations that completed\n"),
        "{out}"
    );
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walkdir(&p));
            }
            out.push(p);
        }
    }
    out
}
