# shellcheck shell=bash
# A real single-node Slurm cluster for tests (sourced, not run): munged, slurmctld and slurmd on
# this machine, everything (key, socket, config, state, spool, logs, pid files) under one folder.
#
#   source tests/cli/slurm_cluster.sh
#   trap slurm_cluster_stop EXIT
#   trap 'exit 130' INT; trap 'exit 143' TERM HUP    # else a signal skips the EXIT trap
#   slurm_cluster_start DIR || exit 77   # prints one line "slurm cannot start here: REASON"
#   sbatch ...                            # SLURM_CONF is exported: the clients talk to this cluster
#
# Made for a container without systemd or cgroups: the daemons run in the foreground (-F/-D) as
# children of the test's shell, so that their pids are known and slurm_cluster_stop ends exactly
# those; process tracking is proctrack/linuxproc, no task plugin, no accounting. Needs root
# (SlurmUser=root) and the Debian packages slurm-wlm and munge (scripts/install_deps.sh).

NVSVP_SLURM_DIR=
NVSVP_SLURM_NODE=
NVSVP_SLURM_PIDS=()      # munged, slurmctld, slurmd: the order they started in
NVSVP_SLURM_TIMEOUT=60   # seconds each start-up step and each stop may take

# True while pid $1 runs; a zombie (exited, not yet reaped) counts as ended.
_slurm_cluster_alive() {
  local state
  state=$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null) || return 1  # the field after "(name)"
  [ -n "$state" ] && [ "$state" != Z ]
}

# What went wrong with daemon $1, on one line, from its log file or else its console output: its
# last two error or fatal lines (the last alone is often a generic "initialization failed"; the
# PMIx plugin's are left out, it fails to load harmlessly), else its last line.
_slurm_cluster_why() {
  local log line
  for log in "$NVSVP_SLURM_DIR/log/$1.log" "$NVSVP_SLURM_DIR/log/$1.out"; do
    [ -s "$log" ] || continue
    line=$(grep -iE 'fatal|error' "$log" | grep -v 'pmix' | tail -2 | paste -sd'|' | sed 's/|/ | /')
    [ -n "$line" ] || line=$(tail -1 "$log")
    echo "${log##*/}: $line"
    return
  done
  echo "($1 wrote nothing)"
}

_slurm_cluster_fail() {
  echo "slurm cannot start here: $*"
  slurm_cluster_stop
  return 1
}

# Ends pid $1 with SIGTERM, then SIGKILL if it is still there after the timeout.
_slurm_cluster_end() {
  local pid=$1 i
  _slurm_cluster_alive "$pid" || { wait "$pid" 2>/dev/null; return 0; }
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < NVSVP_SLURM_TIMEOUT * 5; i++)); do
    _slurm_cluster_alive "$pid" || break
    sleep 0.2
  done
  if _slurm_cluster_alive "$pid"; then
    echo "slurm_cluster_stop: pid $pid did not end within ${NVSVP_SLURM_TIMEOUT} s of SIGTERM; SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null  # reaps it when it is this shell's child
  return 0
}

# Daemons an earlier run left in DIR (a test killed by ctest's timeout cannot run its trap): their
# pid files name them, and only a process whose command line holds DIR is ended.
_slurm_cluster_end_leftovers() {
  local dir=$1 f pid
  for f in "$dir/munge/munged.pid" "$dir/run/slurmctld.pid" "$dir/run/slurmd.pid"; do
    [ -r "$f" ] || continue
    pid=$(head -1 "$f")
    [[ $pid =~ ^[0-9]+$ ]] || continue
    if _slurm_cluster_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/"; then
      echo "slurm_cluster_start: ending pid $pid, left running in $dir by an earlier run" >&2
      _slurm_cluster_end "$pid"
    fi
  done
}

# Two distinct TCP ports nothing listens on now (the kernel picks them).
_slurm_cluster_free_ports() {
  python3 - <<'EOF'
import socket
held = []
for _ in range(2):
    s = socket.socket()
    s.bind(("", 0))
    held.append(s)
print(" ".join(str(s.getsockname()[1]) for s in held))
EOF
}

slurm_cluster_start() {
  local dir=$1 tool node_line ports ctld_port d_port i state name
  local packages="Debian packages slurm-wlm and munge; scripts/install_deps.sh installs them"
  [ -n "$dir" ] || { echo "slurm_cluster_start: expected a folder" >&2; return 2; }
  for tool in munged slurmctld slurmd sbatch sinfo squeue scontrol scancel python3; do
    command -v "$tool" >/dev/null ||
      { _slurm_cluster_fail "$tool is not installed ($packages)"; return; }
  done
  [ "$(id -u)" -eq 0 ] ||
    { _slurm_cluster_fail "the daemons must run as root (SlurmUser=root), this is uid $(id -u)"; return; }

  mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || { _slurm_cluster_fail "cannot create $1"; return; }
  _slurm_cluster_end_leftovers "$dir"
  rm -rf "$dir/munge" "$dir/run" "$dir/state" "$dir/spool" "$dir/log" "$dir/slurm.conf"
  NVSVP_SLURM_DIR=$dir
  NVSVP_SLURM_PIDS=()
  # munged requires its socket's folder to be searchable by all and its key readable by root only.
  mkdir -p "$dir/munge" "$dir/run" "$dir/state" "$dir/spool" "$dir/log" &&
    chmod 755 "$dir/munge" "$dir/spool" ||
    { _slurm_cluster_fail "cannot create the folders under $dir"; return; }
  local socket=$dir/munge/munge.socket
  # A Unix socket's path holds at most 107 bytes.
  [ ${#socket} -le 100 ] ||
    { _slurm_cluster_fail "the munge socket's path $socket is over 100 bytes; give a shorter DIR"; return; }

  # --- munge: its own key, socket, pid and seed files; its log is its stderr (-F) ---
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile="$dir/munge/munge.key" 2>"$dir/log/mungekey.out" ||
      { _slurm_cluster_fail "mungekey failed: $(_slurm_cluster_why mungekey)"; return; }
  else
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none ||
      { _slurm_cluster_fail "cannot write a munge key with dd"; return; }
  fi
  chmod 600 "$dir/munge/munge.key"
  # --force: munged refuses folders that others may write to (a CI workspace may be one); this
  # key guards nothing but a test cluster that lives for a minute.
  munged --foreground --force --socket="$socket" --key-file="$dir/munge/munge.key" \
         --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
         --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
  NVSVP_SLURM_PIDS+=($!)
  for ((i = 0; i < NVSVP_SLURM_TIMEOUT * 5; i++)); do
    [ -S "$socket" ] && break
    _slurm_cluster_alive "${NVSVP_SLURM_PIDS[0]}" ||
      { _slurm_cluster_fail "munged exited: $(_slurm_cluster_why munged)"; return; }
    sleep 0.2
  done
  [ -S "$socket" ] ||
    { _slurm_cluster_fail "munged made no socket in ${NVSVP_SLURM_TIMEOUT} s:" "$(_slurm_cluster_why munged)"
      return; }

  # --- slurm.conf: this host as the one node, with the CPUs and memory slurmd itself detects ---
  node_line=$(slurmd -C 2>/dev/null | head -1)
  name=$(sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' <<<"$node_line")
  [ -n "$name" ] && [[ $node_line == *" CPUs="* ]] ||
    { _slurm_cluster_fail "slurmd -C did not describe this node (it printed ${node_line:-nothing})"; return; }
  NVSVP_SLURM_NODE=$name
  ports=$(_slurm_cluster_free_ports) || { _slurm_cluster_fail "no free TCP ports"; return; }
  read -r ctld_port d_port <<<"$ports"
  # Addresses are 127.0.0.1: the host's name need not resolve in a container.
  cat >"$dir/slurm.conf" <<EOF
# Written by tests/cli/slurm_cluster.sh: a one-node test cluster, no systemd, no cgroups.
ClusterName=nvsvptest
SlurmctldHost=$name(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$(sed 's/ UpTime=.*//' <<<"$node_line") NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$name Default=YES MaxTime=INFINITE State=UP
EOF

  # The clients (sbatch, squeue, ...) must reach this cluster and take no options from a job or
  # a user's environment around the test.
  local variable
  for variable in $(compgen -e); do
    [[ $variable =~ ^(SLURM|SBATCH|SALLOC|SQUEUE|SINFO|SCONTROL)_ ]] && unset "$variable"
  done
  export SLURM_CONF=$dir/slurm.conf

  slurmctld -D -f "$dir/slurm.conf" >"$dir/log/slurmctld.out" 2>&1 &
  NVSVP_SLURM_PIDS+=($!)
  slurmd -D -f "$dir/slurm.conf" -N "$name" >"$dir/log/slurmd.out" 2>&1 &
  NVSVP_SLURM_PIDS+=($!)

  # --- wait until the node is idle: then jobs start on it ---
  state=
  for ((i = 0; i < NVSVP_SLURM_TIMEOUT * 2; i++)); do
    _slurm_cluster_alive "${NVSVP_SLURM_PIDS[1]}" ||
      { _slurm_cluster_fail "slurmctld exited: $(_slurm_cluster_why slurmctld)"; return; }
    _slurm_cluster_alive "${NVSVP_SLURM_PIDS[2]}" ||
      { _slurm_cluster_fail "slurmd exited: $(_slurm_cluster_why slurmd)"; return; }
    state=$(timeout 10 sinfo --noheader --Node --nodes="$name" --format=%T 2>/dev/null | head -1)
    [ "$state" = idle ] && return 0
    sleep 0.5
  done
  _slurm_cluster_fail "node $name is not idle after ${NVSVP_SLURM_TIMEOUT} s (sinfo: ${state:-no answer});" \
                      "$(_slurm_cluster_why slurmctld);" \
                      "$(_slurm_cluster_why slurmd)"
  return 1
}

# Cancels the cluster's jobs, then ends slurmd, slurmctld and munged (the ones slurm_cluster_start
# started, by pid) and waits for each to exit. Safe to call twice, or when nothing started.
slurm_cluster_stop() {
  local i pid
  [ ${#NVSVP_SLURM_PIDS[@]} -gt 0 ] || return 0
  if [ ${#NVSVP_SLURM_PIDS[@]} -ge 3 ] && _slurm_cluster_alive "${NVSVP_SLURM_PIDS[1]}" &&
     _slurm_cluster_alive "${NVSVP_SLURM_PIDS[2]}"; then
    # A job's processes outlive slurmd; cancelling first ends them through slurmd.
    timeout 10 scancel --quiet --full --user=root 2>/dev/null
    for ((i = 0; i < NVSVP_SLURM_TIMEOUT * 2; i++)); do
      [ -z "$(timeout 10 squeue --noheader --format=%i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for ((i = ${#NVSVP_SLURM_PIDS[@]} - 1; i >= 0; i--)); do
    _slurm_cluster_end "${NVSVP_SLURM_PIDS[i]}"
  done
  NVSVP_SLURM_PIDS=()
  return 0
}
