#!/usr/bin/env bash
# scripts/study-parallel.sh over an --sshlogin host: starts an sshd of its own on a free loopback
# port (a host key and a user key made here, nothing of the machine's ssh set-up used or changed),
# runs the study's points through GNU parallel on root@127.0.0.1 over ssh, and requires study.csv
# and summary.json byte-identical to a local `nvsvp study`, with every point run on that host
# (parallel's job log). Where sshd cannot start here, it says why and exits 77 (skipped).
# usage: study_parallel_ssh.sh NVSVP STUDY ROWS WORKDIR [--set K=V ...]
nvsvp=$1
study=$2
rows=$3
work=$4
shift 4
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
rm -rf "$work"
mkdir -p "$work/ssh"
ssh_dir=$work/ssh

skip() { echo "skipped: sshd cannot start here: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -x /usr/sbin/sshd ] || skip "no /usr/sbin/sshd (Debian package openssh-server; scripts/install_deps.sh installs it)"
[ "$(id -u)" -eq 0 ] || skip "not root: sshd logs in only its own user's keys when not root, and this test logs in as root"
ssh-keygen -q -t ed25519 -N '' -f "$ssh_dir/host_key" || skip "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -f "$ssh_dir/user_key" || skip "ssh-keygen failed"
cp "$ssh_dir/user_key.pub" "$ssh_dir/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$ssh_dir/sshd_config" <<CONFIG
Port $port
ListenAddress 127.0.0.1
HostKey $ssh_dir/host_key
AuthorizedKeysFile $ssh_dir/authorized_keys
PidFile $ssh_dir/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
CONFIG
mkdir -p /run/sshd  # sshd's privilege-separation folder
/usr/sbin/sshd -f "$ssh_dir/sshd_config" -E "$ssh_dir/sshd.log" || skip "sshd exited $?: $(tail -1 "$ssh_dir/sshd.log")"
trap '[ -f "$ssh_dir/sshd.pid" ] && kill "$(cat "$ssh_dir/sshd.pid")"' EXIT
ssh_command="ssh -p $port -i $ssh_dir/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
for _ in $(seq 50); do
  $ssh_command root@127.0.0.1 true 2>/dev/null && break
  sleep 0.2
done
$ssh_command root@127.0.0.1 true 2>"$ssh_dir/login.err" || skip "cannot log in over ssh: $(tail -1 "$ssh_dir/login.err")"

"$nvsvp" study "$study" --out "$work/local" "$@" >/dev/null || fail "the local study exited $?"
NVSVP=$nvsvp bash "$scripts/study-parallel.sh" --out "$work/remote" "$@" "$study" \
  --ssh "$ssh_command" --sshlogin 2/root@127.0.0.1 >"$work/remote.log" 2>&1 ||
  { cat "$work/remote.log"; fail "study-parallel.sh over ssh exited $?"; }
[ "$(grep -c . "$work/local/study.csv")" -eq "$rows" ] || fail "the local study.csv has $(grep -c . "$work/local/study.csv") lines, expected $rows"
cmp "$work/local/study.csv" "$work/remote/study.csv" || fail "study.csv differs over ssh"
cmp "$work/local/summary.json" "$work/remote/summary.json" || fail "summary.json differs over ssh"
remote_points=$(awk -F'\t' 'NR > 1 && $2 == "root@127.0.0.1" && $7 == 0' "$work/remote/parallel.joblog" | wc -l)
points=$(wc -l <"$work/remote/commands.txt")
[ "$remote_points" -eq "$points" ] || { cat "$work/remote/parallel.joblog"; fail "$remote_points of $points points ran over ssh"; }
echo "over ssh: $points points on root@127.0.0.1, study.csv ($rows lines) and summary.json identical to the local study"
