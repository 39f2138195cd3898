module github.com/a2a-courier/a2a-courier/client/interop/goserver

go 1.26.8

require github.com/a2aproject/a2a-go v0.3.3

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/sync v0.15.0 // indirect
)
