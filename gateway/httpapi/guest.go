package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/guest"
)

// GuestReadyPath is where a VM's guest says it is up (package guest): cloud-init's
// phone_home module, or a one-line call from any init system. See the README.
const GuestReadyPath = "/guest/ready"

// Limits of a guest's call: phone_home posts the guest's SSH host keys, a few KiB.
const (
	// MaxGuestReadyBytes bounds the body of a call.
	MaxGuestReadyBytes = 16 << 10
	// GuestReadyTimeout bounds the reading of the body and the whole call.
	GuestReadyTimeout = 10 * time.Second
)

// guestReady serves POST /guest/ready. The credential from the config drive comes as
// "Authorization: Bearer <credential>", as the form field token, or as the URL's query
// parameter token (phone_home cannot send headers). Form fields (application/x-www-form-
// urlencoded or multipart): instance_id, hostname, fqdn (used when hostname is empty), and
// addresses as repeated address fields or one addresses field separated by spaces or
// commas. phone_home's pub_key_* fields are accepted and ignored. A bootstrap script (package
// kubecluster) adds step, result (ok or failed), reason and mesh: its step's outcome, which
// guest.Config.OnBootstrap records.
//
// Answers: 200 {"id":"<VM id>","guestState":"READY"}; 400 bad fields; 401 a bad credential;
// 403 another instance's credential; 413 a body over MaxGuestReadyBytes; 429 too many bad
// credentials from this address.
func guestReady(svc *guest.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(GuestReadyTimeout)
		_ = http.NewResponseController(w).SetReadDeadline(deadline)
		if r.ContentLength > MaxGuestReadyBytes {
			guestError(w, http.StatusRequestEntityTooLarge, &apierr.Error{Code: apierr.CodeValidation,
				Message: "the body is larger than 16 KiB"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxGuestReadyBytes)
		if err := parseGuestForm(r); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				guestError(w, http.StatusRequestEntityTooLarge, &apierr.Error{Code: apierr.CodeValidation,
					Message: "the body is larger than 16 KiB"})
				return
			}
			guestError(w, http.StatusBadRequest, apierr.Validation("body", "cannot read the form: %v", err))
			return
		}
		cred := ""
		if h := r.Header.Get("Authorization"); h != "" {
			scheme, token, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				guestError(w, http.StatusUnauthorized, apierr.Unauthenticated("send Authorization: Bearer <credential>"))
				return
			}
			cred = strings.TrimSpace(token)
		} else if v := r.PostForm.Get("token"); v != "" {
			cred = v
		} else {
			cred = r.URL.Query().Get("token")
		}
		host := r.PostForm.Get("hostname")
		if host == "" {
			host = r.PostForm.Get("fqdn")
		}
		var addrs []string
		addrs = append(addrs, r.PostForm["address"]...)
		for _, v := range r.PostForm["addresses"] {
			addrs = append(addrs, strings.FieldsFunc(v, func(c rune) bool { return c == ' ' || c == ',' || c == '\n' || c == '\t' })...)
		}
		ip, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			ip = r.RemoteAddr
		}
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		vm, err := svc.Ready(ctx, cred, guest.Report{InstanceID: r.PostForm.Get("instance_id"), Hostname: host,
			Addresses: addrs, SourceIP: ip, Step: r.PostForm.Get("step"), Result: r.PostForm.Get("result"),
			Reason: r.PostForm.Get("reason"), Mesh: r.PostForm.Get("mesh")})
		if err != nil {
			e, ok := apierr.As(err)
			if !ok {
				log.ErrorContext(ctx, "guest ready", "err", err)
				guestError(w, http.StatusInternalServerError, &apierr.Error{Code: apierr.CodeInternal, Message: "internal error"})
				return
			}
			status := http.StatusBadRequest
			switch e.Code {
			case apierr.CodeUnauthenticated:
				status = http.StatusUnauthorized
			case apierr.CodeForbidden:
				status = http.StatusForbidden
			case guest.CodeRateLimited:
				status = http.StatusTooManyRequests
			}
			guestError(w, status, e)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": vm.ID, "guestState": vm.GuestState,
			"guestHostname": vm.GuestHostname, "guestAddresses": vm.GuestAddresses})
	})
}

// parseGuestForm parses a url-encoded or multipart body (cloud-init's phone_home sends the
// former; curl -F the latter); a call with no body has an empty form.
func parseGuestForm(r *http.Request) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		return r.ParseMultipartForm(MaxGuestReadyBytes)
	}
	return r.ParseForm()
}

// guestError answers the error e as JSON {"errors":[{"message","extensions":{"code"}}]}, the
// API's error shape.
func guestError(w http.ResponseWriter, status int, e *apierr.Error) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusTooManyRequests {
		if s, ok := e.Extra["retryAfterSeconds"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(s))
		}
	}
	w.WriteHeader(status)
	ext := map[string]any{"code": e.Code}
	for k, v := range e.Extra {
		ext[k] = v
	}
	if e.Field != "" {
		ext["field"] = e.Field
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": e.Message, "extensions": ext}}})
}
