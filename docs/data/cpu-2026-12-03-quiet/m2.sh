#!/bin/bash
cd /tmp/cpum
for i in 1 2; do
 for b in base new; do
  uptime > nload-$b-$i.txt
  ./bp-$b run --duration 20s --seed 1 --no-shrink --json n-$b-$i.json > no-$b-$i.txt 2>&1
  echo "$b $i rc=$?" >> done.txt
 done
done
