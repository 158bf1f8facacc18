#!/usr/bin/env bash
# 2026-11-28 eighth session, last device seconds: main's code (954ba68) beside gMatch and
# EGSM on one host for the other issue-18 sets: citeseer, oracle-github, then the 20M
# Chung-Lu triangle and clique4 while time lasts. Carry: .devrun .whl-gpu .shdata .peers/bin.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc7.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
P="--gmatch .peers/bin/gmatch --gmatch-unlabeled .peers/bin/gmatch-unlabeled --egsm .peers/bin/egsm"
timeout -k 5 55 python3 -P bench/static_bench.py --data .shdata --sets citeseer --no-cpu $P --peer-limit 10 --out $R/citeseer-peers.json > $R/citeseer.log 2>&1
echo "citeseer rc $? at $(el) s" | tee -a $R/time.txt
timeout -k 5 55 python3 -P bench/static_bench.py --data .shdata --sets oracle-github --no-cpu $P --peer-limit 10 --out $R/oracle-github-peers.json > $R/oracle.log 2>&1
echo "oracle rc $? at $(el) s" | tee -a $R/time.txt
timeout -k 5 $(( 165 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,clique4 --no-cpu $P --peer-limit 15 --out $R/cl20m-peers.json > $R/cl20m.log 2>&1
echo "cl20m rc $? at $(el) s" | tee -a $R/time.txt
