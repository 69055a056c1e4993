// Package otlp exports spans and metrics over OTLP, as OpenTelemetry's
// OTLP exporters do (http/protobuf and grpc, configured by the same
// OTEL_EXPORTER_OTLP_* variables), without their dependencies: the
// official exporters bring gRPC, protobuf's runtime and the generated
// OTLP types, whose package initialisation and code cost every mcpx
// process several MB of memory whether or not telemetry is on. Here the
// OTLP messages are written field by field from the SDK's own data
// ([Traces], [Metrics]), and sent with net/http, gRPC included (one
// unary call over HTTP/2).
//
//	cfg, err := otlp.FromEnv(os.Getenv, os.ReadFile, otlp.SignalTraces, "grpc")
//	exp := otlp.NewTraceExporter(cfg)
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
//
// The tests decode what is sent with the official OTLP types and serve it
// with the official gRPC server.
package otlp
