import MovieCatalog
/// The example server's HTTP contract as an OpenAPI 3.1 document, served at `GET /openapi.json`.
///
/// `OpenAPIDocumentTests` keeps it true: its paths and methods are exactly the routes the
/// production server serves, and every operation answers with a documented status and body.
/// `.ci/run` fuzzes the running server against it with schemathesis.
enum OpenAPIDocument {
    /// The document, as JSON.
    static let json = #"""
        {
          "openapi": "3.1.0",
          "info": {
            "title": "Scoped movie catalog",
            "version": "1.0.0",
            "description": "The example server of Scoped: a movie catalog on Hummingbird and SQLite. Every response carries X-Request-ID; every error body names the request. A known path asked with a method it does not serve answers 405 with Allow."
          },
          "servers": [{ "url": "http://127.0.0.1:8080" }],
          "paths": {
            "/health": {
              "get": {
                "operationId": "health",
                "summary": "Whether the server is up.",
                "responses": {
                  "200": {
                    "description": "The server is up.",
                    "headers": { "X-Request-ID": { "$ref": "#/components/headers/RequestID" } },
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "required": ["status"],
                          "properties": { "status": { "const": "ok" } }
                        }
                      }
                    }
                  }
                }
              }
            },
            "/metrics": {
              "get": {
                "operationId": "metrics",
                "summary": "The server's metrics in the Prometheus text format: requests, scopes and service builds.",
                "responses": {
                  "200": {
                    "description": "Every metric of the process.",
                    "headers": { "X-Request-ID": { "$ref": "#/components/headers/RequestID" } },
                    "content": { "text/plain": { "schema": { "type": "string" } } }
                  }
                }
              }
            },
            "/openapi.json": {
              "get": {
                "operationId": "openAPIDocument",
                "summary": "This document.",
                "responses": {
                  "200": {
                    "description": "The OpenAPI document.",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "required": ["openapi", "paths"],
                          "properties": { "openapi": { "type": "string" }, "paths": { "type": "object" } }
                        }
                      }
                    }
                  }
                }
              }
            },
            "/movies": {
              "get": {
                "operationId": "listMovies",
                "summary": "A page of the catalog, ordered by id.",
                "parameters": [
                  {
                    "name": "limit",
                    "in": "query",
                    "schema": { "type": "integer", "minimum": 1, "maximum": 500, "default": 50 }
                  },
                  {
                    "name": "offset",
                    "in": "query",
                    "schema": { "type": "integer", "minimum": 0, "maximum": 9223372036854775807, "default": 0 }
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The page and the catalog's size.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/MoviePage" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              },
              "post": {
                "operationId": "createMovie",
                "summary": "Adds a movie.",
                "requestBody": { "$ref": "#/components/requestBodies/Movie" },
                "responses": {
                  "201": {
                    "description": "The movie, with its id.",
                    "headers": {
                      "Location": { "description": "The movie's path.", "schema": { "type": "string" } }
                    },
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Movie" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "413": { "$ref": "#/components/responses/TooLarge" },
                  "422": { "$ref": "#/components/responses/InvalidField" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            },
            "/movies/export": {
              "get": {
                "operationId": "exportMovies",
                "summary": "The whole catalog, one movie per line, ordered by id, from one snapshot.",
                "responses": {
                  "200": {
                    "description": "Newline-delimited JSON, streamed in chunks.",
                    "content": { "application/x-ndjson": { "schema": { "$ref": "#/components/schemas/Movie" } } }
                  },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            },
            "/movies/live": {
              "get": {
                "operationId": "liveRatings",
                "summary": "A WebSocket for recording ratings: each text message {\"rate\":{\"movieID\":1,\"stars\":5}} is recorded in its own transaction and answered with the movie's rating after it committed, or with an error.",
                "responses": {
                  "426": {
                    "description": "A request without a WebSocket upgrade.",
                    "headers": { "Upgrade": { "description": "websocket", "schema": { "type": "string" } } },
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
                  }
                }
              }
            },
            "/movies/{id}": {
              "parameters": [{ "$ref": "#/components/parameters/ID" }],
              "get": {
                "operationId": "showMovie",
                "summary": "One movie.",
                "responses": {
                  "200": {
                    "description": "The movie.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Movie" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "404": { "$ref": "#/components/responses/NotFound" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              },
              "put": {
                "operationId": "replaceMovie",
                "summary": "Replaces a movie's fields.",
                "requestBody": { "$ref": "#/components/requestBodies/Movie" },
                "responses": {
                  "200": {
                    "description": "The movie as replaced.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Movie" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "404": { "$ref": "#/components/responses/NotFound" },
                  "413": { "$ref": "#/components/responses/TooLarge" },
                  "422": { "$ref": "#/components/responses/InvalidField" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              },
              "delete": {
                "operationId": "deleteMovie",
                "summary": "Deletes a movie and its ratings.",
                "responses": {
                  "204": { "description": "Deleted." },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "404": { "$ref": "#/components/responses/NotFound" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            },
            "/movies/{id}/ratings": {
              "parameters": [{ "$ref": "#/components/parameters/ID" }],
              "post": {
                "operationId": "rateMovie",
                "summary": "Records a rating: the movie's check and the insert run in one transaction.",
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": ["stars"],
                        "properties": { "stars": { "type": "integer", "minimum": 1, "maximum": 5 } }
                      }
                    }
                  }
                },
                "responses": {
                  "201": {
                    "description": "The movie's rating after this one.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Rating" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "404": { "$ref": "#/components/responses/NotFound" },
                  "413": { "$ref": "#/components/responses/TooLarge" },
                  "422": { "$ref": "#/components/responses/InvalidField" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            },
            "/movies/{id}/rating": {
              "parameters": [{ "$ref": "#/components/parameters/ID" }],
              "get": {
                "operationId": "showRating",
                "summary": "A movie's average rating and how many ratings it has.",
                "responses": {
                  "200": {
                    "description": "The rating; `average` is null when there are none.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Rating" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "404": { "$ref": "#/components/responses/NotFound" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            },
            "/changes": {
              "get": {
                "operationId": "listMovieChanges",
                "summary": "Who created, replaced or deleted a movie, and when, oldest first. Recorded just after each change's response, so the newest may appear a moment later; kept after the movie is deleted.",
                "parameters": [
                  {
                    "name": "movieID",
                    "in": "query",
                    "required": true,
                    "schema": { "type": "integer", "minimum": 1, "maximum": 9223372036854775807 }
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The changes; empty for a movie never changed through the API.",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/MovieChanges" } } }
                  },
                  "400": { "$ref": "#/components/responses/BadRequest" },
                  "503": { "$ref": "#/components/responses/Busy" }
                }
              }
            }
          },
          "components": {
            "parameters": {
              "ID": {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": { "type": "integer", "minimum": 1, "maximum": 9223372036854775807 }
              }
            },
            "headers": {
              "RequestID": {
                "description": "The request's ID: a valid incoming X-Request-ID, or one the server made.",
                "schema": { "type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$" }
              }
            },
            "requestBodies": {
              "Movie": {
                "required": true,
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/MovieInput" } } }
              }
            },
            "responses": {
              "BadRequest": {
                "description": "A malformed id, query parameter, JSON body or override header; `field` names it.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
              },
              "NotFound": {
                "description": "No movie with that id.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
              },
              "TooLarge": {
                "description": "The body is larger than 1 MiB.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
              },
              "InvalidField": {
                "description": "A field is missing, of the wrong type or out of range; `field` names it.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
              },
              "Busy": {
                "description": "The database is busy (`busy`), unavailable (`database_unavailable`) or did not answer in time (`database_timeout`), or a service did not finish closing in time (`close_timeout`); retry shortly.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
              }
            },
            "schemas": {
              "Movie": {
                "type": "object",
                "required": ["id", "title", "year", "director"],
                "properties": {
                  "id": { "type": "integer", "minimum": 1 },
                  "title": { "type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000]*$" },
                  "year": { "type": "integer", "minimum": 1888, "maximum": 2100 },
                  "director": { "type": ["string", "null"], "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000]*$" }
                }
              },
              "MovieInput": {
                "type": "object",
                "required": ["title", "year"],
                "properties": {
                  "title": { "type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000]*$" },
                  "year": { "type": "integer", "minimum": 1888, "maximum": 2100 },
                  "director": { "type": ["string", "null"], "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000]*$" }
                }
              },
              "MoviePage": {
                "type": "object",
                "required": ["items", "total"],
                "properties": {
                  "items": { "type": "array", "items": { "$ref": "#/components/schemas/Movie" } },
                  "total": { "type": "integer", "minimum": 0 }
                }
              },
              "Rating": {
                "type": "object",
                "required": ["movieID", "average", "count"],
                "properties": {
                  "movieID": { "type": "integer", "minimum": 1 },
                  "average": { "type": ["number", "null"], "minimum": 1, "maximum": 5 },
                  "count": { "type": "integer", "minimum": 0 }
                }
              },
              "MovieChanges": {
                "type": "object",
                "required": ["items"],
                "properties": {
                  "items": {
                    "type": "array",
                    "items": {
                      "type": "object",
                      "required": ["movieID", "action", "changedAt"],
                      "properties": {
                        "movieID": { "type": "integer", "minimum": 1 },
                        "action": { "type": "string", "enum": ["created", "replaced", "deleted"] },
                        "requestID": { "type": ["string", "null"] },
                        "changedAt": { "type": "string" }
                      }
                    }
                  }
                }
              },
              "Error": {
                "type": "object",
                "required": ["error", "requestID"],
                "properties": {
                  "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                      "code": { "type": "string" },
                      "message": { "type": "string", "minLength": 1 },
                      "field": { "type": "string" }
                    }
                  },
                  "requestID": { "type": "string" }
                }
              }
            }
          }
        }
        """#
}
