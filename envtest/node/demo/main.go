// The demo app of `npm run cluster`: a small HTTP server that answers /healthz and shows its environment, so a user
// sees a CustomApp's new ConfigMap and Secret values after a rollout. It never logs the environment.
//
// Environment:
//
//	PORT   the port to listen on (default 8080)
//	READY  "false" makes /healthz answer 503, so that a readiness probe on /healthz keeps the pod un-Ready while the app
//	       runs and serves its page; any other value, or none, answers 200. A pod without a readiness probe is Ready
//	       whenever its container runs: even an app that exits at once is seen Ready for a moment, which is why the
//	       app does not exit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

func logLine(fields map[string]any) {
	fields["time"] = time.Now().UTC().Format(time.RFC3339Nano)
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	ready := os.Getenv("READY") != "false"
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: READY=false")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		env := os.Environ()
		sort.Strings(env)
		host, _ := os.Hostname()
		w.Header().Set("content-type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "customapp demo on %s\n\n%s\n", host, strings.Join(env, "\n"))
	})
	server := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// SIGTERM (the kubelet stopping the pod) ends the server cleanly: exit 0, so the pod ends Succeeded.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		received := <-stop
		logLine(map[string]any{"msg": "stopping", "signal": received.String()})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
	}()
	logLine(map[string]any{"msg": "listening", "port": port, "ready": ready})
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logLine(map[string]any{"msg": "server failed", "error": err.Error()})
		os.Exit(1)
	}
}
