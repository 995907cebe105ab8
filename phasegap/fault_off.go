//go:build !phasegap_fault

package phasegap

// envFault is the injected halo bug of builds tagged phasegap_fault; in
// this build, none.
func envFault() faultHook { return nil }
