package report

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strconv"

	"github.com/google/renameio/v2"
)

// FileName is the report's name in a run directory.
const FileName = "report.html"

// Page is what the template draws.
type Page struct {
	Title    string
	Dir      string
	Header   [][2]string // label, value
	Status   string
	Reason   string
	Warnings []string // the measured conditions over their bounds
	Sections []Section
	Notes    []string
}

// Build reads dir (Load) and returns the report's HTML: one
// self-contained page, the same bytes for the same directory.
func Build(dir string) ([]byte, error) {
	r, err := Load(dir)
	if err != nil {
		return nil, err
	}
	return Render(r)
}

// Render draws r's page.
func Render(r *Run) ([]byte, error) {
	pg := Page{Title: filepath.Base(filepath.Clean(r.Dir)), Dir: r.Dir, Notes: r.Notes}
	if s := r.Summary; s != nil {
		pg.Title = s.Scenario
		pg.Status, pg.Reason = s.Status, s.StatusReason
		for _, c := range s.Conditions {
			if c.Over {
				pg.Warnings = append(pg.Warnings, fmt.Sprintf("%s %s > %s (%s)", c.Name, condValue(c.Value, c.Unit), condValue(c.Bound, c.Unit), c.Why))
			}
		}
		pg.Header = append(pg.Header,
			[2]string{"scenario", s.Scenario}, [2]string{"seed", strconv.FormatUint(s.Seed, 10)},
			[2]string{"backend", s.Backend}, [2]string{"nodes", strconv.Itoa(s.Nodes)},
			[2]string{"protocol", s.Protocol}, [2]string{"duration", strconv.FormatFloat(s.Virtual, 'g', 6, 64) + " s"})
		if s.EventHash != "" {
			pg.Header = append(pg.Header, [2]string{"events", fmt.Sprintf("%d (hash %s)", s.Events, s.EventHash)})
		}
		pg.Header = append(pg.Header, [2]string{"network", fmt.Sprintf("%d datagrams, %d delivered, %d lost", s.Network.Packets, s.Network.Delivered, s.Network.Lost)})
		if sy := s.Sync; sy != nil {
			pg.Header = append(pg.Header, [2]string{"sync", fmt.Sprintf("%s mode, %s estimator, %d rounds, converged from round %d", sy.Mode, sy.Estimator, sy.Rounds, sy.ConvergedFrom)})
			if e := sy.Online.OffsetError; e.N > 0 {
				pg.Header = append(pg.Header, [2]string{"offset error", fmt.Sprintf("p50 %s, p99 %s, max %s (%d points against the truth)", fmtNS(e.P50), fmtNS(e.P99), fmtNS(e.Max), e.N)})
			}
			if sc := sy.SelfCheck; sc != nil {
				pg.Header = append(pg.Header, [2]string{"self-check", fmt.Sprintf("%d of %d predictions within 3σ, worst %.3gσ", sc.Within3Sigma, sc.Predictions, sc.MaxSigma)})
			}
			pr := sy.Probes
			pg.Header = append(pg.Header, [2]string{"probes", fmt.Sprintf("%d pairs sent, %d answered, %d lost", pr.PairsSent, pr.Answered, pr.Lost)})
		}
		if t := s.Trace; t != nil {
			pg.Header = append(pg.Header, [2]string{"traces", fmt.Sprintf("violations %d raw → %d combined; alignment error p99 %s", t.Raw.Violations, t.Combined.Violations, fmtNS(t.ErrorNS.P99))})
		}
	}
	for _, f := range []func(*Run) (*Section, error){syncSection, tracedSection, phasegapSection, peersSection} {
		s, err := f(r)
		if err != nil {
			return nil, err
		}
		if s != nil {
			pg.Sections = append(pg.Sections, *s)
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return b.Bytes(), nil
}

// condValue formats a condition's value in its unit.
func condValue(v float64, unit string) string {
	switch unit {
	case "ns":
		return fmtNS(v)
	case "share":
		return strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + unit
}

// Write builds dir's report and writes it atomically to out ("" is
// dir/report.html); it returns the path written.
func Write(dir, out string) (string, error) {
	if out == "" {
		out = filepath.Join(dir, FileName)
	}
	page, err := Build(dir)
	if err != nil {
		return "", err
	}
	if err := renameio.WriteFile(out, page, 0o644, renameio.WithTempDir(filepath.Dir(out))); err != nil {
		return "", fmt.Errorf("report: write %s: %w", out, err)
	}
	return out, nil
}

var pageTemplate = template.Must(template.New("report").Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>chronosync report: {{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
.dir { color: #666; font-family: monospace; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
table.header th { width: 9em; }
.status-ok { color: #060; font-weight: bold; }
.status-bad { color: #b00; font-weight: bold; }
td.mark { color: #b00; font-weight: bold; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.3em; }
p.empty { font-style: italic; color: #666; border: 1px dashed #ccc; padding: 0.6em; }
.notes { color: #a50; }
</style>
</head>
<body>
<h1>chronosync report: {{.Title}}</h1>
<div class="dir">{{.Dir}}</div>
{{if .Header}}<table class="header">
{{if .Status}}<tr><th>status</th><td class="{{if eq .Status "ok"}}status-ok{{else}}status-bad{{end}}">{{.Status}}{{if .Reason}}: {{.Reason}}{{end}}{{range .Warnings}}<br>warning: {{.}}{{end}}</td></tr>
{{end}}{{range .Header}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
{{else}}<p>No summary.json in this directory.</p>
{{end}}{{range .Notes}}<p class="notes">{{.}}</p>
{{end}}{{if not .Sections}}<p class="empty">Nothing to draw: this directory has none of the files the report reads (offsets.jsonl, rounds.jsonl, *.validate.json, results.csv, peers.csv).</p>
{{end}}{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Intro}}<p>{{.}}</p>
{{end}}{{range .Figures}}{{if .Empty}}<p class="empty" id="{{.ID}}">{{.Caption}} {{.Empty}}</p>
{{else}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{end}}{{range .Tables}}<table>
<caption>{{.Caption}}</caption>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Mark}} class="mark"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}</section>
{{end}}</body>
</html>
`
