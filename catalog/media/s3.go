package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"broll/internal/apperr"
)

// S3Options names the bucket of an S3 store.
type S3Options struct {
	Endpoint  string // http(s)://host[:port]
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	PathStyle bool
	// PresignTTL is how long the GET URLs handed to clients work.
	PresignTTL time.Duration
	// PublicEndpoint is the store as clients reach it, when that differs
	// from how the service does (an in-cluster name): presigned URLs name
	// it. "": Endpoint.
	PublicEndpoint string
}

// S3 is a Store in an S3-compatible bucket (AWS S3, MinIO,
// versitygw...). Clients fetch files through presigned URLs (Linker),
// so the bytes of a download never pass through the API.
type S3 struct {
	client *minio.Client
	// signer presigns the URLs clients get: client itself, or one for the
	// public endpoint (presigning is local: it sends no request).
	signer *minio.Client
	bucket string
	ttl    time.Duration
}

// s3PartSize is the part of a streamed upload of unknown size that minio-go
// holds in memory; its default for unknown sizes is hundreds of MiB.
const s3PartSize = 16 << 20

// NewS3 connects to the bucket, which must exist.
func NewS3(ctx context.Context, o S3Options) (*S3, error) {
	client, err := newS3Client(o, o.Endpoint)
	if err != nil {
		return nil, err
	}
	signer := client
	if o.PublicEndpoint != "" && o.PublicEndpoint != o.Endpoint {
		if signer, err = newS3Client(o, o.PublicEndpoint); err != nil {
			return nil, err
		}
	}
	ok, err := client.BucketExists(ctx, o.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3 media: bucket %s: %w", o.Bucket, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3 media: bucket %s does not exist", o.Bucket)
	}
	ttl := o.PresignTTL
	if ttl <= 0 {
		ttl = time.Minute
	}
	return &S3{client: client, signer: signer, bucket: o.Bucket, ttl: ttl}, nil
}

func newS3Client(o S3Options, endpoint string) (*minio.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("s3 media: endpoint %q is not a URL", endpoint)
	}
	lookup := minio.BucketLookupDNS
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       o.Region,
		BucketLookup: lookup,
		MaxRetries:   3,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 media: %w", err)
	}
	return client, nil
}

// Put uploads r under key. A file's size is known and sent up front; any
// other reader is streamed in parts of s3PartSize.
func (m *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	size := int64(-1)
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	info, err := m.client.PutObject(ctx, m.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: ContentType(key), PartSize: s3PartSize,
	})
	if err != nil {
		return 0, fmt.Errorf("media put %s: %w", key, err)
	}
	return info.Size, nil
}

// Open returns the object under key; reads fetch it in ranges as needed.
func (m *S3) Open(ctx context.Context, key string) (File, error) {
	obj, err := m.client.GetObject(ctx, m.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, m.fail("open", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		return nil, m.fail("open", key, err)
	}
	return &s3File{Object: obj, size: st.Size}, nil
}

type s3File struct {
	*minio.Object
	size int64
}

func (f *s3File) Size() int64 { return f.size }

// Stat returns the size of the object under key.
func (m *S3) Stat(ctx context.Context, key string) (int64, error) {
	st, err := m.client.StatObject(ctx, m.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return 0, m.fail("stat", key, err)
	}
	return st.Size, nil
}

// GetURL presigns a GET of key for the store's presign TTL.
func (m *S3) GetURL(ctx context.Context, key, contentType, attachment string) (string, error) {
	params := url.Values{}
	if contentType != "" {
		params.Set("response-content-type", contentType)
	}
	if attachment != "" {
		params.Set("response-content-disposition", fmt.Sprintf(`attachment; filename="%s"`, attachment))
	}
	u, err := m.signer.PresignedGetObject(ctx, m.bucket, key, m.ttl, params)
	if err != nil {
		return "", fmt.Errorf("media presign %s: %w", key, err)
	}
	return u.String(), nil
}

// PutURL presigns a PUT of key with its Content-Type, Content-Length and
// "If-None-Match: *" among the signed headers: the store refuses another
// type or size, and, the write being conditional, any PUT once the object
// exists (412), so an upload's object is written once and never replaced
// after an import took it. (AWS S3, MinIO and versitygw honour conditional
// writes.)
func (m *S3) PutURL(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, map[string]string, error) {
	headers := map[string]string{"Content-Type": contentType, "Content-Length": strconv.FormatInt(size, 10), "If-None-Match": "*"}
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	u, err := m.signer.PresignHeader(ctx, http.MethodPut, m.bucket, key, ttl, nil, h)
	if err != nil {
		return "", nil, fmt.Errorf("media presign %s: %w", key, err)
	}
	return u.String(), headers, nil
}

// fail maps a missing object to not_found and wraps anything else.
func (m *S3) fail(op, key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound) {
		return apperr.NotFoundf("media file not found")
	}
	return fmt.Errorf("media %s %s: %w", op, key, err)
}

// internalURL presigns a GET through the service's own endpoint, for the
// worker's ffprobe and ffmpeg (which may not reach the public one).
func (m *S3) internalURL(ctx context.Context, key string) (string, error) {
	u, err := m.client.PresignedGetObject(ctx, m.bucket, key, m.ttl, nil)
	if err != nil {
		return "", fmt.Errorf("media presign %s: %w", key, err)
	}
	return u.String(), nil
}

// Remove deletes the object under key; a missing object is no error (S3
// answers a DELETE of one with success).
func (m *S3) Remove(ctx context.Context, key string) error {
	if err := m.client.RemoveObject(ctx, m.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return m.fail("remove", key, err)
	}
	return nil
}
