module github.com/chromekeeper/chromekeeper

go 1.26.8

require (
	github.com/go-rod/rod v0.116.2
	go.uber.org/zap v1.28.0
)

require (
	github.com/stretchr/testify v1.11.1 // indirect
	github.com/ysmood/fetchup v0.2.3 // indirect
	github.com/ysmood/gson v0.7.3 // indirect
	github.com/ysmood/leakless v0.9.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
)
