package peers

import (
	"net/netip"
	"strings"
	"testing"
)

func TestChronyConf(t *testing.T) {
	cfg := ChronyConfig{ServerNS: "a", ClientNS: "b", ServerAddr: netip.MustParseAddr("10.78.0.1"), Poll: -4, XLeave: true, Dir: "/d"}
	client := clientConf(cfg, "/d/client")
	for _, want := range []string{
		"server 10.78.0.1 iburst minpoll -4 maxpoll -4 xleave\n",
		"port 0\n", "cmdport 0\n", "bindcmdaddress /d/client/chronyd.sock\n",
		"pidfile /d/client/chronyd.pid\n", "logdir /d/client\n", "log tracking\n",
	} {
		if !strings.Contains(client, want) {
			t.Errorf("client configuration lacks %q:\n%s", want, client)
		}
	}
	cfg.XLeave = false
	if c := clientConf(cfg, "/d/client"); strings.Contains(c, "xleave") {
		t.Errorf("xleave in basic mode:\n%s", c)
	}
	server := serverConf(cfg, "/d/server")
	for _, want := range []string{"local stratum 1\n", "allow\n", "bindcmdaddress /d/server/chronyd.sock\n"} {
		if !strings.Contains(server, want) {
			t.Errorf("server configuration lacks %q:\n%s", want, server)
		}
	}
	if strings.Contains(server, "\nport 0\n") {
		t.Errorf("server does not serve:\n%s", server)
	}
}

func TestPTPConf(t *testing.T) {
	conf := ptpConf(PTPConfig{LogSyncInterval: -4}, "/d/slave")
	for _, want := range []string{
		"[global]\n", "free_running 1\n", "logSyncInterval -4\n", "summary_interval -4\n",
		"uds_address /d/slave/ptp4l.sock\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("configuration lacks %q:\n%s", want, conf)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	good := ChronyConfig{ServerNS: "a", ClientNS: "b", ServerAddr: netip.MustParseAddr("10.78.0.1"), Poll: -4, Dir: t.TempDir()}
	for name, mutate := range map[string]func(*ChronyConfig){
		"no namespace": func(c *ChronyConfig) { c.ServerNS = "" },
		"no address":   func(c *ChronyConfig) { c.ServerAddr = netip.Addr{} },
		"poll too low": func(c *ChronyConfig) { c.Poll = -7 },
		"no dir":       func(c *ChronyConfig) { c.Dir = "" },
	} {
		cfg := good
		mutate(&cfg)
		if _, _, err := StartChrony(cfg); err == nil {
			t.Errorf("StartChrony with %s: no error", name)
		}
	}
	goodPTP := PTPConfig{MasterNS: "a", MasterIface: "x", SlaveNS: "b", SlaveIface: "y", LogSyncInterval: -4, Dir: t.TempDir()}
	for name, mutate := range map[string]func(*PTPConfig){
		"no interface":  func(c *PTPConfig) { c.SlaveIface = "" },
		"sync too slow": func(c *PTPConfig) { c.LogSyncInterval = 1 },
		"sync too fast": func(c *PTPConfig) { c.LogSyncInterval = -8 },
		"no dir":        func(c *PTPConfig) { c.Dir = "" },
	} {
		cfg := goodPTP
		mutate(&cfg)
		if _, _, err := StartPTP(cfg); err == nil {
			t.Errorf("StartPTP with %s: no error", name)
		}
	}
}
