// Package backgroundtest is for tests of code that must let the
// network poller in (internal/background): a kernel timer the poller
// watches stands for the network, and NetworkTurns counts how often a
// goroutine waiting on it runs while the code under test does. Linux
// only (timerfd).
package backgroundtest
