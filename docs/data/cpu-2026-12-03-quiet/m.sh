#!/bin/bash
# quiet-machine CPU campaign measure: base (0c20c06) vs new, same seed, 30 s each, twice, alternating
cd /tmp/cpum
for i in 1 2; do
 for b in base new; do
  uptime > load-$b-$i.txt
  ./bp-$b run --duration 30s --seed 1 --json r-$b-$i.json > o-$b-$i.txt 2>&1
  echo "$b $i rc=$?" >> done.txt
 done
done
