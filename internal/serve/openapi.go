package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Route is one path the server answers; the handler is registered and the
// OpenAPI document written from the same table.
type Route struct {
	ID          string
	Method      string
	Pattern     string // net/http's ServeMux pattern: /api/v1/get/{kind}
	Summary     string
	Description string
	Params      []Param
	// Body is the request body's media type and what it holds.
	Body, BodyDescription string
	// Produces is the success answer's media type; Schema names the
	// command whose -o json it is.
	Produces string
	Answer   string
	// Errors are the error statuses the route answers, besides 503 before
	// the first build and 500 for a fault of the tool.
	Errors []int
}

// Param is a query or path parameter.
type Param struct {
	Name        string
	In          string // query or path
	Type        string // string, integer or boolean
	Repeated    bool
	Required    bool
	Description string
}

func (r Route) param(name string) (Param, bool) {
	for _, p := range r.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

func (r Route) queryNames() string {
	var names []string
	for _, p := range r.Params {
		if p.In == "query" {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "no parameters"
	}
	return strings.Join(names, ", ")
}

// matches says whether path is the route's pattern, a {wildcard} taking
// one non-empty segment.
func (r Route) matches(path string) bool {
	want, got := strings.Split(r.Pattern, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if strings.HasPrefix(w, "{") && got[i] != "" {
			continue
		}
		if w != got[i] {
			return false
		}
	}
	return true
}

func routeByID(id string) Route {
	for _, r := range Routes() {
		if r.ID == id {
			return r
		}
	}
	panic("serve: no route " + id) // a handler names a route that exists
}

const (
	jsonType = "application/json"
	textType = "text/plain"
	promType = "text/plain; version=0.0.4"
)

func q(name, typ, desc string) Param {
	return Param{Name: name, In: "query", Type: typ, Description: desc}
}

func qs(name, desc string) Param {
	return Param{Name: name, In: "query", Type: "string", Repeated: true, Description: desc}
}

func path(name, desc string) Param {
	return Param{Name: name, In: "path", Type: "string", Required: true, Description: desc}
}

// Routes lists what the server answers, in the order the OpenAPI
// document lists it.
func Routes() []Route {
	ns := q("namespace", "string", "Namespace of pod/, deploy/ and svc/ arguments (default \"default\")")
	return []Route{
		{ID: "trace", Method: http.MethodGet, Pattern: "/api/v1/trace",
			Summary:     "Walk one connection through the twin (trace SRC DST -o json)",
			Description: "SRC is pod/NAME, deploy/NAME, node/NAME or an IP address; DST is pod/NAME, deploy/NAME, node/NAME, svc/NAME, an IP address or a DNS name. The answer is trace's -o json; delivered says whether the connection is delivered.",
			Params: []Param{
				{Name: "src", In: "query", Type: "string", Required: true, Description: "Source: pod/NAME, deploy/NAME, node/NAME or an IP address"},
				{Name: "dst", In: "query", Type: "string", Required: true, Description: "Destination: pod/NAME, deploy/NAME, node/NAME, svc/NAME, an IP address or a DNS name"},
				ns,
				q("port", "integer", "Destination port (default: the Service's first port, the pod's first container port, else 80)"),
				q("proto", "string", "tcp (default), udp or icmp"),
			},
			Produces: jsonType, Answer: "trace -o json", Errors: []int{400, 404}},
		{ID: "reach", Method: http.MethodGet, Pattern: "/api/v1/reach",
			Summary: "The reachability matrix (reach -o json)",
			Params: []Param{
				q("namespace", "string", "Namespace of the sources and destinations (default: the server's namespace)"),
				q("allNamespaces", "boolean", "Sources and destinations in every namespace (-A)"),
				qs("from", "Sources: ns/NAME, pod/NAME, deploy/NAME, svc/NAME, node/NAME or a label selector; repeatable"),
				qs("to", "Destinations: ns/NAME, pod/NAME, deploy/NAME, svc/NAME or a label selector; repeatable"),
				q("port", "integer", "Only this destination port"),
				q("proto", "string", "Only this protocol: tcp, udp or icmp"),
				q("nodes", "boolean", "Add every node as a source row"),
			},
			Produces: jsonType, Answer: "reach -o json", Errors: []int{400}},
		{ID: "check", Method: http.MethodGet, Pattern: "/api/v1/check",
			Summary: "Every constraint of the cluster (check -o json)",
			Params: []Param{
				qs("rule", "Run only these rules (IDs or names; repeatable or comma-separated)"),
				qs("skip", "Do not run these rules (IDs or names; repeatable or comma-separated)"),
				q("expectWindows", "boolean", "Windows nodes are planned: readiness blockers are errors"),
			},
			Produces: jsonType, Answer: "check -o json", Errors: []int{400}},
		{ID: "get", Method: http.MethodGet, Pattern: "/api/v1/get/{kind}",
			Summary:     "The twin's objects of one kind as a v1 List (get KIND -o json)",
			Description: "KIND is any name get takes: pods, po, ipamblocks, hnsendpoints, routes …",
			Params: []Param{
				path("kind", "The kind, as get takes it"),
				q("namespace", "string", "Namespace (default: the server's namespace)"),
				q("allNamespaces", "boolean", "Every namespace (-A)"),
				q("selector", "string", "Label selector, as kubectl's -l"),
				q("fieldSelector", "string", "Field selector, as kubectl's --field-selector"),
				q("node", "string", "For the compiled dataplane's kinds: the node whose dataplane to list"),
			},
			Produces: jsonType, Answer: "get KIND -o json", Errors: []int{400, 404}},
		{ID: "getName", Method: http.MethodGet, Pattern: "/api/v1/get/{kind}/{name}",
			Summary: "One object (get KIND NAME -o json)",
			Params: []Param{
				path("kind", "The kind, as get takes it"),
				path("name", "The object's name"),
				q("namespace", "string", "Namespace (default: the server's namespace)"),
				q("node", "string", "For the compiled dataplane's kinds: the node whose dataplane to list"),
			},
			Produces: jsonType, Answer: "get KIND NAME -o json", Errors: []int{400, 404}},
		{ID: "exec", Method: http.MethodPost, Pattern: "/api/v1/exec",
			Summary:     "What a command prints on a node or in a pod of the twin (exec TARGET -- COMMAND)",
			Description: "The body is {\"target\": \"node/NAME\", \"namespace\": \"NS\", \"command\": [\"ip\", \"route\"]}; the answer is {\"stdout\", \"stderr\", \"exitCode\"}. A command that fails is still a 200 with its exit code; a target that does not exist is a 404.",
			Body:        jsonType, BodyDescription: "An exec request: target, namespace, command",
			Produces: jsonType, Answer: "exec", Errors: []int{400, 404}},
		{ID: "diff", Method: http.MethodPost, Pattern: "/api/v1/diff",
			Summary:     "The differential twin against a what-if (diff --what-if FILE -o json)",
			Description: "The body is a what-if as YAML or JSON documents, layered on the input as diff --what-if layers a file.",
			Params: []Param{
				q("nodes", "boolean", "Add every node as a source of the reachability difference"),
				q("noReach", "boolean", "Leave out the reachability difference"),
			},
			Body: "application/yaml", BodyDescription: "The what-if: YAML or JSON documents",
			Produces: jsonType, Answer: "diff -o json", Errors: []int{400}},
		{ID: "metrics", Method: http.MethodGet, Pattern: "/metrics",
			Summary:  "Prometheus metrics: findings by rule and severity, nodes by OS and readiness, IPAM blocks, rebuilds",
			Produces: promType},
		{ID: "healthz", Method: http.MethodGet, Pattern: "/healthz", Summary: "The process answers", Produces: textType},
		{ID: "readyz", Method: http.MethodGet, Pattern: "/readyz", Summary: "A twin is built and answers", Produces: textType},
		{ID: "openapi", Method: http.MethodGet, Pattern: "/openapi.json", Summary: "This document", Produces: jsonType},
	}
}

// OpenAPI writes the OpenAPI 3 document of Routes.
func OpenAPI(w io.Writer, version string) error {
	type obj = map[string]any
	paths := obj{}
	for _, r := range Routes() {
		op := obj{"operationId": r.ID, "summary": r.Summary}
		if r.Description != "" {
			op["description"] = r.Description
		}
		var params []obj
		for _, p := range r.Params {
			schema := obj{"type": p.Type}
			if p.Repeated {
				schema = obj{"type": "array", "items": obj{"type": p.Type}}
			}
			po := obj{"name": p.Name, "in": p.In, "description": p.Description, "schema": schema}
			if p.Required {
				po["required"] = true
			}
			if p.Repeated {
				po["explode"] = true
			}
			params = append(params, po)
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.Body != "" {
			op["requestBody"] = obj{"required": true, "description": r.BodyDescription,
				"content": obj{r.Body: obj{"schema": obj{"type": bodyType(r.Body)}}}}
		}
		ok := "OK"
		if r.Answer != "" {
			ok = "The JSON of `kubectl-hybrid " + r.Answer + "`"
		}
		responses := obj{"200": obj{"description": ok, "content": obj{r.Produces: obj{"schema": obj{"type": bodyType(r.Produces)}}}}}
		errs := r.Errors
		if strings.HasPrefix(r.Pattern, "/api/") {
			errs = append(append([]int(nil), errs...), 500, 503)
		}
		for _, st := range errs {
			responses[strconv.Itoa(st)] = obj{"description": http.StatusText(st),
				"content": obj{jsonType: obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
		}
		op["responses"] = responses
		item, _ := paths[r.Pattern].(obj)
		if item == nil {
			item = obj{}
			paths[r.Pattern] = item
		}
		item[strings.ToLower(r.Method)] = op
	}
	doc := obj{
		"openapi": "3.0.3",
		"info": obj{"title": "kubectl-hybrid serve", "version": version,
			"description": "The warm twin's HTTP API: each answer is the JSON the command prints with -o json."},
		"paths": paths,
		"components": obj{"schemas": obj{"Error": obj{"type": "object", "required": []string{"error"},
			"properties": obj{"error": obj{"type": "string", "description": "What is wrong, in one line"}}}}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func bodyType(media string) string {
	if media == jsonType {
		return "object"
	}
	return "string"
}

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", jsonType)
	return OpenAPI(w, "v1")
}
