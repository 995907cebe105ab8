// Package real will implement the world on the operating system: OS clocks
// transformed by injected offset and drift, UDP with kernel timestamps, TCP
// streams, nodes in Linux network namespaces with impairment. It is built by
// the real-backend issue; until then `chronosync run --backend=real` refuses
// with a clear error.
package real
