package phasegap

import "github.com/chronosync/chronosync/phasegap/params"

// Params are a run's parameters (package params holds them, their
// defaults, bounds and field table).
type Params = params.Params

// Settings are the parameters a scenario's phasegap workload sets
// (params.Settings).
type Settings = params.Settings

// Derived are the parameters that follow from Params.
type Derived = params.Derived

// Modes returns the orchestrations PhaseGap compares (--mode).
func Modes() []string { return params.Modes() }

// Kernels returns the kernels (--kernel).
func Kernels() []string { return params.Kernels() }

// DefaultParams are the plan's defaults.
func DefaultParams() Params { return params.DefaultParams() }

// The modes (package params documents each).
const (
	ModeNB      = params.ModeNB
	ModeBlk     = params.ModeBlk
	ModeNBTest  = params.ModeNBTest
	ModePersist = params.ModePersist
	ModeTasks   = params.ModeTasks
)

// Kernels (--kernel).
const (
	KernelStencil3 = params.KernelStencil3
	KernelStencil5 = params.KernelStencil5
	KernelAxpy     = params.KernelAxpy
)

// Limits of the parameters (package params documents each).
const (
	MaxN       = params.MaxN
	MaxThreads = params.MaxThreads
	MaxIters   = params.MaxIters
	MaxRadius  = params.MaxRadius
	MaxSteps   = params.MaxSteps
	MaxIntense = params.MaxIntense
)
