package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestThrottle(t *testing.T) {
	var buf bytes.Buffer
	l := throttle(slog.New(slog.NewTextHandler(&buf, nil)), 10*time.Second)
	start := time.Now()
	at := func(d time.Duration, lv slog.Level, msg string) {
		r := slog.NewRecord(start.Add(d), lv, msg, 0)
		if err := l.Handler().Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	at(time.Second, slog.LevelInfo, "early")        // within 10 s of the start: dropped
	at(11*time.Second, slog.LevelInfo, "due")       // passed
	at(15*time.Second, slog.LevelInfo, "soon")      // 4 s after the last: dropped
	at(16*time.Second, slog.LevelWarn, "warning")   // warnings always pass
	at(21*time.Second, slog.LevelInfo, "due again") // 10 s after "due"
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		_, msg, _ := strings.Cut(line, "msg=")
		got = append(got, msg)
	}
	want := []string{"due", "warning", `"due again"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
}
