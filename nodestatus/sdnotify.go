package nodestatus

import (
	"fmt"
	"net"
	"os"
)

// EnvNotifySocket is the variable in which systemd names its notification
// socket for a unit of Type=notify.
const EnvNotifySocket = "NOTIFY_SOCKET"

// SDNotify sends state ("READY=1", "STATUS=...", "STOPPING=1", one
// assignment a line) to systemd's notification socket, as sd_notify(3)
// does. Without $NOTIFY_SOCKET (not run by systemd, or not Type=notify) it
// sends nothing and returns false, nil. An abstract socket is written
// @name.
func SDNotify(getenv func(string) string, state string) (bool, error) {
	name := getenv(EnvNotifySocket)
	if name == "" {
		return false, nil
	}
	if name[0] == '@' {
		name = "\x00" + name[1:]
	} else if name[0] != '/' {
		return false, fmt.Errorf("sd_notify: %s=%q: expected an absolute path or @abstract name", EnvNotifySocket, name)
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("sd_notify: %w", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("sd_notify %q: %w", state, err)
	}
	return true, nil
}

// notifyLine is the one-line STATUS= of st, which systemctl status shows.
func notifyLine(st *Status) string {
	if st.LastRound.ID == 0 {
		return fmt.Sprintf("STATUS=node %d: %s, no round yet", st.Node, st.State)
	}
	s := fmt.Sprintf("STATUS=node %d: %s, round %d, offset %+.0f ns (sigma %.0f ns), self-check %d/%d",
		st.Node, st.State, st.LastRound.ID, st.OffsetNS, st.OffsetSigmaNS, st.SelfCheck.Within, st.SelfCheck.Of)
	if st.Reason != "" {
		s += ": " + st.Reason
	}
	return s
}

// notify sends state when the server was asked to (Options.Notify),
// logging a failure: systemd's view of the node must never stop it.
func (s *Server) notify(state string) {
	if !s.notifyOn {
		return
	}
	if _, err := SDNotify(os.Getenv, state); err != nil {
		s.log.Warn("sd_notify", "err", err)
	}
}
