#!/bin/bash
# cases.sh BIN LABEL DIR: issue 30's resource cases (B1-B4) against the
# chronosync binary BIN, with DIR made by gen-hostile.sh; one line each:
# label | seconds | peak RSS | exit status | last line of output.
B=$1; W=$2; I=$3; here=$(dirname "$0"); M=$here/measure.sh
R=${REALDATA:-$(cd "$here/../../.." && pwd)/shared/realdata}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for f in events20M string1G events1M space16M space64M space1024M; do
  mkdir -p $I/$f && ln -sf ../$f.json.gz $I/$f/node0.json.gz
  $M $B "$W combine $f" combine --traces $I/$f/node0.json.gz --output $out/c.xplane.pb
  $M $B "$W validate $f" validate $I/$f.json.gz
done
$M $B "$W /dev/zero XSpace (combine)" combine --traces /dev/zero --output $out/c.xplane.pb
$M $B "$W /dev/zero snapshots" combine --traces $R/gpu_worker.xplane.pb --snapshots /dev/zero --output $out/c.xplane.pb
$M $B "$W /dev/zero cluster" node --cluster /dev/zero --rank 0 --out $out/n
$M $B "$W /dev/zero scenario" run /dev/zero
$M $B "$W /dev/zero offsets" combine --traces $R/sampled_rank-0.json.gz --offsets /dev/zero --output $out/c.xplane.pb
TMO=5 $M $B "$W FIFO XSpace trace" combine --traces $I/fifo --output $out/c.xplane.pb
TMO=5 $M $B "$W FIFO Kineto trace" validate $I/fifo.json
TMO=5 $M $B "$W FIFO offsets" combine --traces $R/sampled_rank-0.json.gz --offsets $I/fifo --output $out/c.xplane.pb
TMO=5 $M $B "$W FIFO key" run quickstart --key $I/fifo
$M $B "$W 4 GiB key" run quickstart --key $I/big.key
