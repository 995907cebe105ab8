// Package readers holds the tests that every command's reader of an input
// goes through package infile: a device or a FIFO given as any input is
// refused at once, naming what it is (issue 30).
package readers
