module github.com/custody-gateway/custody

go 1.26.8

require (
	github.com/dlclark/regexp2 v1.10.0
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
	golang.org/x/text v0.41.0
)

require github.com/google/uuid v1.3.0 // indirect
