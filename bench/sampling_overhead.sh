#!/bin/sh
# Paired runs: sampling off (--counter-period 0) and on at the default period
# (1,000 cycles), back to back, PAIRS times (default 5); per pair the
# engine's run.wall_seconds, the whole command's wall and CPU seconds and
# its minor page faults (fresh memory touched), then the median overhead of
# each. Other load on the machine shows in the wall times' spread (CPU
# seconds and page faults much less): run it when nothing else is.
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-5}
log=$(mktemp)
i=0
while [ $i -lt "$PAIRS" ]; do
  i=$((i + 1))
  for p in 0 default; do
    rm -rf /tmp/bs_$p
    extra=""; [ $p = 0 ] && extra="--counter-period 0"
    s=$(date +%s.%N)
    /usr/bin/time -f "%U %S %R" -o /tmp/bs_$p.time \
      .venv/bin/tofusim coll allreduce --algo ring --size 1MiB --system bgl:8x8x8 --out /tmp/bs_$p $extra --json > /tmp/bs_$p.json 2>/dev/null
    e=$(date +%s.%N)
    python3 -c "
import json
d = json.load(open('/tmp/bs_$p.json')); r = d['run']; u, s, f = map(float, open('/tmp/bs_$p.time').read().split())
print('$i', '$p', round(r['wall_seconds'], 3), round($e - $s, 3), round(u + s, 3), int(f), r.get('counter_samples', {}).get('samples', 0))" | tee -a "$log"
  done
done
python3 - "$log" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
off = {r[0]: r for r in rows if r[1] == "0"}
on = {r[0]: r for r in rows if r[1] == "default"}
for k, name in ((2, "engine wall"), (3, "command wall"), (4, "command CPU"), (5, "page faults")):
    d = [float(on[i][k]) / float(off[i][k]) - 1 for i in off if i in on]
    print(f"{name:13s} median {statistics.median(d):+.1%}  pairs " + " ".join(f"{x:+.1%}" for x in d))
EOF
rm -f "$log"
