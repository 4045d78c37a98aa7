// The benchmark's controller-runtime peer: CustomApps reconciled into Deployments with kubebuilder's static-indexed ConfigMap watch.
//
// It is what a kubebuilder user writes for "watching externally managed resources": For(CustomApp),
// Owns(Deployment), and Watches(ConfigMap) mapped through a field index on spec.configMapName, so the manager's
// cache holds every ConfigMap, CustomApp and Deployment in the cluster. It serves /stats (JSON: heap, RSS, API
// requests by verb and resource, open watches, reconciles, cached objects) for the benchmark harness.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The CustomApp API, hand-written (no code generation): only the fields this reconcile reads and writes.
var groupVersion = schema.GroupVersion{Group: "app.example.com", Version: "v1"}

const (
	configHashAnnotation = "app.example.com/config-hash"
	fieldManager         = "customapp-peer"
	configMapNameIndex   = ".spec.configMapName"
)

type CustomAppSpec struct {
	Image         string `json:"image"`
	ConfigMapName string `json:"configMapName,omitempty"`
	SecretName    string `json:"secretName,omitempty"`
	Replicas      *int32 `json:"replicas,omitempty"`
	Port          *int32 `json:"port,omitempty"`
}

type CustomAppStatus struct {
	ObservedGeneration    int64              `json:"observedGeneration,omitempty"`
	ObservedConfigMapName string             `json:"observedConfigMapName,omitempty"`
	ConfigHash            string             `json:"configHash,omitempty"`
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
}

type CustomApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CustomAppSpec   `json:"spec"`
	Status            CustomAppStatus `json:"status,omitempty"`
}

type CustomAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CustomApp `json:"items"`
}

func (in *CustomApp) DeepCopyInto(out *CustomApp) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Replicas != nil {
		out.Spec.Replicas = ptr.To(*in.Spec.Replicas)
	}
	if in.Spec.Port != nil {
		out.Spec.Port = ptr.To(*in.Spec.Port)
	}
	if in.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

func (in *CustomApp) DeepCopyObject() kruntime.Object {
	out := new(CustomApp)
	in.DeepCopyInto(out)
	return out
}

func (in *CustomAppList) DeepCopyObject() kruntime.Object {
	out := new(CustomAppList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]CustomApp, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// contentHash is operator/dependencies/content-hash.ts's contentHash, in Go: the hex SHA-256 of
// `{"d":[[key,value],…],"b":[[key,base64],…]}`, each list sorted by key, as JavaScript's JSON.stringify writes it
// (no HTML escaping). ConfigMap keys are [-._a-zA-Z0-9]+, so byte order and JavaScript's code-unit order agree.
// One known difference: Go escapes U+2028 and U+2029 inside values, JavaScript does not.
func contentHash(data map[string]string, binaryData map[string][]byte) string {
	binary := make(map[string]string, len(binaryData))
	for key, value := range binaryData {
		binary[key] = base64.StdEncoding.EncodeToString(value)
	}
	var canonical bytes.Buffer
	encoder := json.NewEncoder(&canonical)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(struct {
		D [][2]string `json:"d"`
		B [][2]string `json:"b"`
	}{sortedPairs(data), sortedPairs(binary)})
	sum := sha256.Sum256(bytes.TrimSuffix(canonical.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}

func sortedPairs(values map[string]string) [][2]string {
	pairs := make([][2]string, 0, len(values))
	for key, value := range values {
		pairs = append(pairs, [2]string{key, value})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}

// reconciler turns one CustomApp into a Deployment carrying the hash of its ConfigMap.
type reconciler struct {
	client.Client
	reconciles atomic.Int64
	trace      *tracer
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.reconciles.Add(1)
	ctx = r.trace.reconcileStarts(ctx, req.String())
	var app CustomApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if app.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // the Deployment goes with its owner (garbage collection)
	}
	hash := ""
	if app.Spec.ConfigMapName != "" {
		var configMap corev1.ConfigMap
		err := r.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Spec.ConfigMapName}, &configMap)
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, r.writeStatus(ctx, &app, "", metav1.ConditionFalse, "ConfigMapNotFound")
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		hash = contentHash(configMap.Data, configMap.BinaryData)
	}
	if err := r.ensureDeployment(ctx, &app, hash); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.writeStatus(ctx, &app, hash, metav1.ConditionTrue, "Reconciled")
}

func desiredDeployment(app *CustomApp, hash string) *appsv1.Deployment {
	labels := map[string]string{
		"app.kubernetes.io/name":       "customapp",
		"app.kubernetes.io/instance":   app.Name,
		"app.kubernetes.io/managed-by": "customapp-peer",
	}
	container := corev1.Container{
		Name:  "app",
		Image: app.Spec.Image,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			RunAsNonRoot:             ptr.To(true),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	if app.Spec.ConfigMapName != "" {
		container.EnvFrom = append(container.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: app.Spec.ConfigMapName},
		}})
	}
	replicas := ptr.To(int32(1))
	if app.Spec.Replicas != nil {
		replicas = ptr.To(*app.Spec.Replicas)
	}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      app.Name,
			Namespace: app.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: groupVersion.String(), Kind: "CustomApp", Name: app.Name, UID: app.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{configHashAnnotation: hash}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			},
		},
	}
}

// ensureDeployment creates the Deployment, or patches it when the image, replicas or hash differ from the cache.
func (r *reconciler) ensureDeployment(ctx context.Context, app *CustomApp, hash string) error {
	desired := desiredDeployment(app, hash)
	var existing appsv1.Deployment
	err := r.Get(ctx, client.ObjectKeyFromObject(desired), &existing)
	if apierrors.IsNotFound(err) {
		defer r.trace.write(ctx, "create", time.Now())
		return client.IgnoreAlreadyExists(r.Create(ctx, desired, client.FieldOwner(fieldManager)))
	}
	if err != nil {
		return err
	}
	current := existing.Spec.Template
	if len(current.Spec.Containers) == 1 && current.Spec.Containers[0].Image == app.Spec.Image &&
		current.Annotations[configHashAnnotation] == hash &&
		ptr.Deref(existing.Spec.Replicas, 1) == ptr.Deref(desired.Spec.Replicas, 1) {
		return nil
	}
	patch := client.MergeFrom(existing.DeepCopy())
	existing.Spec.Replicas = desired.Spec.Replicas
	existing.Spec.Template = desired.Spec.Template
	defer r.trace.write(ctx, "patch", time.Now())
	return r.Patch(ctx, &existing, patch, client.FieldOwner(fieldManager))
}

func (r *reconciler) writeStatus(ctx context.Context, app *CustomApp, hash string, ready metav1.ConditionStatus, reason string) error {
	before := app.DeepCopy()
	app.Status.ObservedGeneration = app.Generation
	app.Status.ObservedConfigMapName = app.Spec.ConfigMapName
	app.Status.ConfigHash = hash
	meta.SetStatusCondition(&app.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: ready, Reason: reason, Message: reason, ObservedGeneration: app.Generation,
	})
	if statusEqual(before.Status, app.Status) {
		return nil
	}
	return r.Status().Patch(ctx, app, client.MergeFrom(before), client.FieldOwner(fieldManager))
}

func statusEqual(a, b CustomAppStatus) bool {
	left, _ := json.Marshal(a)
	right, _ := json.Marshal(b)
	return string(left) == string(right)
}

func (in *CustomApp) DeepCopy() *CustomApp {
	out := new(CustomApp)
	in.DeepCopyInto(out)
	return out
}

// appsForConfigMap is the kubebuilder map function: the CustomApps whose spec.configMapName index names this ConfigMap.
func (r *reconciler) appsForConfigMap(ctx context.Context, object client.Object) []reconcile.Request {
	var apps CustomAppList
	if err := r.List(ctx, &apps, client.InNamespace(object.GetNamespace()), client.MatchingFields{configMapNameIndex: object.GetName()}); err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(apps.Items))
	for _, app := range apps.Items {
		request := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}}
		r.trace.enqueue(request.String(), "configmap "+object.GetNamespace()+"/"+object.GetName())
		requests = append(requests, request)
	}
	return requests
}

// tracer writes the operator's trace lines for one ConfigMap update (`--trace`), named as the TypeScript operator
// names its own so that bench/update-trace.ts reads both: `enqueue` when the map function hands a CustomApp to the
// queue, `reconcile.start`, and `write` with the Deployment write's round trip. An enqueue's trace id goes to the
// reconcile that takes the key next; events the queue coalesces share the first one's. A nil tracer writes nothing.
type tracer struct {
	mu      sync.Mutex
	next    int64
	pending map[string]string
}

type traceIDKey struct{}

func newTracer(enabled bool) *tracer {
	if !enabled {
		return nil
	}
	return &tracer{pending: map[string]string{}}
}

// line writes one JSON line to stderr; time is epoch milliseconds with the microseconds as its fraction.
func (t *tracer) line(fields map[string]any) {
	fields["time"] = float64(time.Now().UnixMicro()) / 1000
	encoded, _ := json.Marshal(fields)
	fmt.Fprintln(os.Stderr, string(encoded))
}

func (t *tracer) enqueue(key, reason string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	id, waiting := t.pending[key]
	if !waiting {
		t.next++
		id = strconv.FormatInt(t.next, 10)
		t.pending[key] = id
	}
	t.mu.Unlock()
	t.line(map[string]any{"msg": "enqueue", "key": key, "reason": reason, "traceId": id})
}

func (t *tracer) reconcileStarts(ctx context.Context, key string) context.Context {
	if t == nil {
		return ctx
	}
	t.mu.Lock()
	id := t.pending[key]
	delete(t.pending, key)
	t.mu.Unlock()
	t.line(map[string]any{"msg": "reconcile.start", "key": key, "traceId": id})
	return context.WithValue(ctx, traceIDKey{}, [2]string{key, id})
}

func (t *tracer) write(ctx context.Context, verb string, sent time.Time) {
	if t == nil {
		return
	}
	trace, _ := ctx.Value(traceIDKey{}).([2]string)
	t.line(map[string]any{
		"msg": "write", "key": trace[0], "traceId": trace[1], "verb": verb, "resource": "deployments.apps",
		"durationMs": float64(time.Since(sent).Microseconds()) / 1000,
	})
}

// phaseProfiler profiles the process from its start and cuts the profile where the harness says a phase ended (POST
// /profile?save=<label>), as the TypeScript runner's PhaseProfiler does: `<dir>/<label>.pprof` holds the samples since
// the last cut, and a cut without a label drops them. At Go's own 100 Hz: asked for 1000 (runtime.SetCPUProfileRate),
// the profiles of one run held a fifth of the CPU time /proc counted.
type phaseProfiler struct {
	mu      sync.Mutex
	dir     string
	current *bytes.Buffer
}

var phaseLabel = regexp.MustCompile(`^[\w-]{1,100}$`)

func startPhaseProfiler(dir string) (*phaseProfiler, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	p := &phaseProfiler{dir: dir}
	return p, p.begin()
}

func (p *phaseProfiler) begin() error {
	p.current = &bytes.Buffer{}
	return pprof.StartCPUProfile(p.current)
}

// cut ends the current profile, writes it when a label is given, and starts the next; answers the file written.
func (p *phaseProfiler) cut(label string) (string, error) {
	if label != "" && !phaseLabel.MatchString(label) {
		return "", fmt.Errorf("phase profile: label %q is not 1 to 100 letters, digits, \"-\" or \"_\"", label)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pprof.StopCPUProfile()
	profile := p.current
	if err := p.begin(); err != nil {
		return "", err
	}
	if label == "" {
		return "", nil
	}
	path := filepath.Join(p.dir, label+".pprof")
	return path, os.WriteFile(path, profile.Bytes(), 0o644)
}

// requestCounter counts every API request by verb and resource, and the watches open right now, like the
// operator's KubeClient does for ours.
type requestCounter struct {
	mu          sync.Mutex
	byVerb      map[string]map[string]int64
	openWatches atomic.Int64
	next        http.RoundTripper
}

func (c *requestCounter) RoundTrip(request *http.Request) (*http.Response, error) {
	verb, resource := classify(request)
	c.mu.Lock()
	if c.byVerb[verb] == nil {
		c.byVerb[verb] = map[string]int64{}
	}
	c.byVerb[verb][resource]++
	c.mu.Unlock()
	response, err := c.next.RoundTrip(request)
	if err != nil || verb != "watch" {
		return response, err
	}
	c.openWatches.Add(1)
	response.Body = &watchBody{ReadCloser: response.Body, onClose: func() { c.openWatches.Add(-1) }}
	return response, nil
}

type watchBody struct {
	io.ReadCloser
	once    sync.Once
	onClose func()
}

func (b *watchBody) Close() error {
	b.once.Do(b.onClose)
	return b.ReadCloser.Close()
}

// classify names a request as RBAC does: the verb, and the resource as `plural[.group]`.
func classify(request *http.Request) (string, string) {
	parts := strings.Split(strings.Trim(request.URL.Path, "/"), "/")
	var rest []string
	group := ""
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	default:
		return strings.ToLower(request.Method), "discovery"
	}
	if len(rest) > 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	resource, named := "", false
	if len(rest) > 0 {
		resource = rest[0]
		named = len(rest) > 1
	}
	if group != "" {
		resource += "." + group
	}
	if len(rest) > 2 {
		resource += "/" + rest[2] // the subresource: customapps.app.example.com/status
	}
	switch request.Method {
	case http.MethodGet:
		if request.URL.Query().Get("watch") == "true" || request.URL.Query().Get("watch") == "1" {
			return "watch", resource
		}
		if named {
			return "get", resource
		}
		return "list", resource
	case http.MethodPost:
		return "create", resource
	case http.MethodPut:
		return "update", resource
	case http.MethodPatch:
		return "patch", resource
	case http.MethodDelete:
		return "delete", resource
	}
	return strings.ToLower(request.Method), resource
}

// stats is what /stats answers.
type stats struct {
	Ready          bool                        `json:"ready"`
	HeapUsedBytes  uint64                      `json:"heapUsedBytes"`
	HeapTotalBytes uint64                      `json:"heapTotalBytes"`
	RssBytes       uint64                      `json:"rssBytes"`
	Requests       map[string]map[string]int64 `json:"requests"`
	OpenWatches    int64                       `json:"openWatches"`
	Reconciles     int64                       `json:"reconciles"`
	CachedObjects  map[string]int              `json:"cachedObjects"`
	GcForced       bool                        `json:"gcForced"`
}

func residentBytes() uint64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(raw))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(fields[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func serveStats(ctx context.Context, address string, mgr ctrl.Manager, counter *requestCounter, r *reconciler, ready *atomic.Bool, profiler *phaseProfiler) error {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("stats listener on %q: %w", address, err)
	}
	fmt.Printf("{\"msg\":\"stats listening\",\"address\":%q}\n", listener.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /profile", func(w http.ResponseWriter, request *http.Request) {
		if profiler == nil {
			http.Error(w, "this peer was started without --profile-dir", http.StatusNotFound)
			return
		}
		path, err := profiler.cut(request.URL.Query().Get("save"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var written any // null when the samples were dropped
		if path != "" {
			written = path
		}
		w.Header().Set("content-type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": written})
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, request *http.Request) {
		answer := stats{Ready: ready.Load(), OpenWatches: counter.openWatches.Load(), Reconciles: r.reconciles.Load(), CachedObjects: map[string]int{}}
		if answer.Ready {
			reader := mgr.GetCache()
			lists := map[string]client.ObjectList{"configmaps": &corev1.ConfigMapList{}, "customapps.app.example.com": &CustomAppList{}, "deployments.apps": &appsv1.DeploymentList{}}
			for name, list := range lists {
				if err := reader.List(request.Context(), list, client.UnsafeDisableDeepCopy); err == nil {
					answer.CachedObjects[name] = meta.LenList(list)
				}
			}
		}
		if request.URL.Query().Get("gc") == "1" {
			runtime.GC()
			answer.GcForced = true
		}
		var memory runtime.MemStats
		runtime.ReadMemStats(&memory)
		answer.HeapUsedBytes, answer.HeapTotalBytes, answer.RssBytes = memory.HeapAlloc, memory.HeapSys, residentBytes()
		counter.mu.Lock()
		answer.Requests = map[string]map[string]int64{}
		for verb, resources := range counter.byVerb {
			answer.Requests[verb] = map[string]int64{}
			for resource, count := range resources {
				answer.Requests[verb][resource] = count
			}
		}
		counter.mu.Unlock()
		w.Header().Set("content-type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tokenOverPlainHTTP restores the bearer token of a plain-http kubeconfig (the emulator): client-go's clientcmd
// reads a user's credentials only when the server is https, and would otherwise send no Authorization header.
func tokenOverPlainHTTP(config *rest.Config) error {
	if config.BearerToken != "" || !strings.HasPrefix(config.Host, "http://") {
		return nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if flagValue := flag.Lookup("kubeconfig"); flagValue != nil && flagValue.Value.String() != "" {
		rules.ExplicitPath = flagValue.Value.String()
	}
	raw, err := rules.Load()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if context := raw.Contexts[raw.CurrentContext]; context != nil {
		if user := raw.AuthInfos[context.AuthInfo]; user != nil {
			config.BearerToken = user.Token
		}
	}
	return nil
}

func run() error {
	statsAddress := flag.String("stats-bind-address", "127.0.0.1:0", "where /stats is served")
	workers := flag.Int("max-concurrent-reconciles", 1, "reconcile workers (controller-runtime's default is 1)")
	qps := flag.Float64("kube-api-qps", -1, "client-side rate limit; < 0 disables it (ours has none)")
	trace := flag.Bool("trace", false, "write trace lines (enqueue, reconcile.start, write) to stderr")
	profileDir := flag.String("profile-dir", "", "profile the CPU from the start, cut at POST /profile?save=<label>")
	flag.Parse()
	profiler, err := startPhaseProfiler(*profileDir)
	if err != nil {
		return err
	}
	ctrl.SetLogger(funcr.NewJSON(func(line string) { fmt.Fprintln(os.Stderr, line) }, funcr.Options{}))

	config, err := ctrl.GetConfig() // --kubeconfig (registered by controller-runtime), then KUBECONFIG, in-cluster, ~/.kube/config
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := tokenOverPlainHTTP(config); err != nil {
		return err
	}
	config.QPS, config.Burst = float32(*qps), 0
	config.UserAgent = "customapp-peer/controller-runtime"
	counter := &requestCounter{byVerb: map[string]map[string]int64{}}
	config.Wrap(func(next http.RoundTripper) http.RoundTripper {
		counter.next = next
		return counter
	})

	scheme := clientgoscheme.Scheme
	scheme.AddKnownTypes(groupVersion, &CustomApp{}, &CustomAppList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &CustomApp{}, configMapNameIndex, func(object client.Object) []string {
		if name := object.(*CustomApp).Spec.ConfigMapName; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index %s: %w", configMapNameIndex, err)
	}
	r := &reconciler{Client: mgr.GetClient(), trace: newTracer(*trace)}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("customapp").
		For(&CustomApp{}).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.appsForConfigMap),
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}

	ready := &atomic.Bool{}
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			ready.Store(true)
		}
	}()
	statsDone := make(chan error, 1)
	go func() { statsDone <- serveStats(ctx, *statsAddress, mgr, counter, r, ready, profiler) }()
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("manager stopped: %w", err)
	}
	return <-statsDone
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "{\"level\":\"error\",\"msg\":%q}\n", err.Error())
		os.Exit(1)
	}
}
