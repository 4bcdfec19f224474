#!/bin/sh
# Paired runs: sampling off (--counter-period 0) and on at the default period, back to back.
cd "$(dirname "$0")/.."
for i in 1 2 3; do
  for p in 0 default; do
    rm -rf /tmp/bs_$p
    extra=""; [ $p = 0 ] && extra="--counter-period 0"
    s=$(date +%s.%N)
    .venv/bin/tofusim coll allreduce --algo ring --size 1MiB --system bgl:8x8x8 --out /tmp/bs_$p $extra --json > /tmp/bs_$p.json 2>/dev/null
    e=$(date +%s.%N)
    python3 -c "import json;d=json.load(open('/tmp/bs_$p.json'));r=d['run'];print('$p', round(r['wall_seconds'],3), round($e-$s,3), r.get('counter_samples',{}).get('samples',0))"
  done
done
