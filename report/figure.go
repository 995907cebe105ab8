package report

import "html/template"

// Figure is one figure of the page: an inline SVG and its caption, or,
// where there is nothing to draw, Empty says so instead.
type Figure struct {
	ID      string
	Caption string
	SVG     template.HTML
	Empty   string
}

// Table is a table of the page.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]Cell
}

// Cell is one cell of a table; Mark highlights it (a daemon that did not
// run, a rejected link).
type Cell struct {
	Text string
	Mark bool
}

// Section is one part of the page: sync, traces, PhaseGap, peers.
type Section struct {
	ID      string
	Title   string
	Intro   []string
	Figures []Figure
	Tables  []Table
}

// emptyFigure is a figure with nothing to draw.
func emptyFigure(id, caption, why string) Figure {
	return Figure{ID: id, Caption: caption, Empty: why}
}

// cells turns strings into plain cells.
func cells(s ...string) []Cell {
	out := make([]Cell, len(s))
	for i, v := range s {
		out[i] = Cell{Text: v}
	}
	return out
}
