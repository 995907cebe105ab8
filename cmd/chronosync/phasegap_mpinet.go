package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/phasegap/sweep"
)

// runMPINet runs pt's ranks under mpirun, one rank per network namespace
// of the network a real run of pt's scenario gets (its links with the
// point's preset, applied by the shaper), over OpenMPI's TCP transport.
// mpirun runs in node 0's namespace and starts the other nodes' daemons
// through a launch agent that enters their namespaces, as ssh would
// reach other hosts; the daemons' traffic and the ranks' cross the same
// shaped links. mpirun.log holds the network's log, then mpirun's output.
func (r *sweepRunner) runMPINet(ctx context.Context, pt sweep.Point, out string) (_ string, err error) {
	ip, err := exec.LookPath("ip")
	if err != nil {
		return "", fmt.Errorf("mpi-net: %w", err)
	}
	sc, err := r.m.Scenario(pt)
	if err != nil {
		return "", err
	}
	var log bytes.Buffer
	nw, err := harness.StartNetwork(sc, &log)
	if err != nil {
		return "", fmt.Errorf("mpi-net: %w", err)
	}
	defer func() {
		if cerr := nw.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("mpi-net: remove the network: %w", cerr))
		}
	}()
	launch, err := os.MkdirTemp("", "chronosync-mpinet-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(launch)
	lab := nw.Lab()
	nodes := make([]netNode, lab.Nodes())
	for i := range nodes {
		nodes[i] = netNode{addr: lab.Addr(i).String(), ns: lab.NodeNS(i)}
	}
	hosts, agent, err := writeNetLaunch(launch, nodes, ip)
	if err != nil {
		return "", fmt.Errorf("mpi-net: %w", err)
	}
	subnet := netip.PrefixFrom(lab.Addr(0), lab.Prefixlen()).Masked().String()
	args := []string{"netns", "exec", lab.NodeNS(0), "mpirun", "-np", strconv.Itoa(pt.Params.Ranks),
		"--bind-to", "none", "--hostfile", hosts, "--mca", "plm_rsh_agent", agent,
		"--mca", "btl_tcp_if_include", subnet, "--mca", "oob_tcp_if_include", subnet}
	if r.root {
		args = append(args, "--allow-run-as-root")
	}
	args = append(args, r.phasegapArgs(pt, out, "--transport", "tcp", "--impairment", pt.Preset)...)
	fmt.Fprintf(&log, "mpi-net: %s %s\n", ip, strings.Join(args, " "))
	return r.mpirun(ctx, ip, args, out, log.Bytes())
}

// netNode is a node of an mpi-net run's network: its address, and the
// namespace it lives in.
type netNode struct{ addr, ns string }

// writeNetLaunch writes, into dir, mpirun's hostfile (node i's address,
// one slot each, so that rank i runs on node i) and its launch agent: a
// script that runs the command mpirun gives it, as a remote shell would,
// in the namespace of the node whose address it is given (with ip, the
// iproute2 program's path).
func writeNetLaunch(dir string, nodes []netNode, ip string) (hosts, agent string, err error) {
	var h, a strings.Builder
	a.WriteString("#!/bin/sh\n# mpirun's launch agent (chronosync phasegap sweep, transport mpi-net):\n")
	a.WriteString("# runs the daemon's command line in the namespace of the node with address $1.\n")
	a.WriteString("host=$1\nshift\ncase \"$host\" in\n")
	for _, n := range nodes {
		fmt.Fprintf(&h, "%s slots=1\n", n.addr)
		fmt.Fprintf(&a, "%s) ns=%s ;;\n", n.addr, n.ns)
	}
	fmt.Fprintf(&a, "*) echo \"mpi-net agent: $host is no node of this network\" >&2; exit 1 ;;\nesac\n")
	fmt.Fprintf(&a, "exec %s netns exec \"$ns\" /bin/sh -c \"$*\"\n", ip)
	hosts, agent = filepath.Join(dir, "hosts"), filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(hosts, []byte(h.String()), 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(agent, []byte(a.String()), 0o755); err != nil {
		return "", "", err
	}
	return hosts, agent, nil
}
